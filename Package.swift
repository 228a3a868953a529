// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
        /// What an app adds to show Herald's messages: no server code, no libmicrohttpd, no GRDB.
        .library(name: "HeraldDelivery", targets: ["HeraldDelivery"]),
        /// The parsers' modules, for the fuzz package in `Fuzz/` (a package reaches another's targets only through products).
        .library(name: "HeraldHTTP", targets: ["HeraldHTTP"]),
        .library(name: "HeraldDomain", targets: ["HeraldDomain"]),
        .library(name: "HeraldConsole", targets: ["HeraldConsole"]),
        .library(name: "HeraldStorage", targets: ["HeraldStorage"]),
        .library(name: "HeraldSQLite", targets: ["HeraldSQLite"]),
        .library(name: "HeraldPostgres", targets: ["HeraldPostgres"]),
        .library(name: "HeraldPush", targets: ["HeraldPush"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // Push: APNs over HTTP/2 and FCM HTTP v1 (async-http-client), and the mock providers the tests
        // run (a SwiftNIO HTTP/2 server over TLS with a self-signed certificate).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // Operations: counters and histograms recorded through swift-metrics, exported in Prometheus's
        // text format on a listener of their own (`herald serve --metrics-port`).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // PostgreSQL, for teams that outgrow one machine: the stores' second engine.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Tests only: generators for the generated-input properties.
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        /// libmicrohttpd, from Debian's libmicrohttpd-dev, plus inline shims for its variadic calls.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        /// zlib, from Debian's zlib1g-dev: the feed's gzip variant.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        /// Request and Response values, form and multipart parsing, content codings: HTTP without a socket.
        .target(name: "HeraldHTTP", dependencies: ["CZlib"]),
        /// The HTTP adapter: the only code that touches libmicrohttpd.
        .target(
            name: "HeraldMicroHTTPD",
            dependencies: [
                "CMicroHTTPD", "HeraldHTTP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        /// Plain value types shared by the console, the API and the delivery client.
        .target(name: "HeraldDomain", plugins: ["EnglishCatalog"]),
        /// The delivery client: fetches the feed, decides what to show and when, reports events.
        .target(name: "HeraldDelivery", dependencies: ["HeraldDomain"]),
        /// What the console asks of a database: the store protocols, their row models and the decisions both
        /// engines share. No engine's library: the console depends on this, and `herald` picks the engine.
        .target(
            name: "HeraldStorage",
            dependencies: [
                "HeraldDomain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        /// The stores on SQLite, through GRDB: one embedded file, the default.
        .target(
            name: "HeraldSQLite",
            dependencies: [
                "HeraldDomain", "HeraldStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API: the event insert loop binds values without boxing them, and
                // a read-only database is told apart from a failing one.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        /// The stores on PostgreSQL, through postgres-nio, for teams that outgrow one machine; with the copy
        /// of an SQLite database into it, which reads the SQLite file.
        .target(
            name: "HeraldPostgres",
            dependencies: [
                "HeraldDomain", "HeraldStorage", "HeraldSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        /// Routing, middleware and the features of the console and API.
        .target(
            name: "HeraldConsole",
            dependencies: [
                "HeraldHTTP", "HeraldDomain", "HeraldStorage", "HeraldPush",
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            plugins: ["BuildInfo", "EnglishCatalog"]
        ),
        /// Writes `HeraldBuild` (version and commit) into HeraldConsole at build time.
        .plugin(name: "BuildInfo", capability: .buildTool()),
        /// Writes the English sentences of `Locales/en.json` that HeraldDomain and HeraldConsole say without a
        /// catalog at hand (the API, the command line, the delivery client) into them at build time.
        .plugin(name: "EnglishCatalog", capability: .buildTool()),
        /// Sends one notification to one device through APNs or FCM HTTP v1, and says what came of it.
        .target(
            name: "HeraldPush",
            dependencies: [
                "HeraldDomain",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        /// Mock APNs and FCM servers for the tests and the benchmark: HTTP/2 over TLS, verifying tokens as
        /// the real providers do, with scripted answers by device token and a control port.
        .target(
            name: "PushMock",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/PushMock"
        ),
        /// `herald-push-mock keys|serve`: the mock providers as a process, for the Python tests and the benchmark.
        .executableTarget(
            name: "herald-push-mock",
            dependencies: [
                "PushMock",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/PushMockServer"
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldConsole", "HeraldMicroHTTPD", "HeraldStorage", "HeraldSQLite", "HeraldPostgres", "HeraldDomain",
                "HeraldDelivery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        /// What several test targets use: one test database on either engine (the storage contract and the
        /// tests that need both engines), temporary folders, and the generated-input drawer.
        .target(
            name: "TestSupport",
            dependencies: [
                "HeraldDomain", "HeraldStorage", "HeraldSQLite", "HeraldPostgres", "CZlib",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/TestSupport"
        ),
        /// The domain's values and rules, with nothing above them linked.
        .testTarget(
            name: "HeraldDomainTests",
            dependencies: ["HeraldDomain", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        /// HTTP values and parsers without a socket or a feature.
        .testTarget(
            name: "HeraldHTTPTests",
            dependencies: ["HeraldHTTP", "CZlib", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        /// The storage contract: every store on both engines, without the console.
        .testTarget(
            name: "HeraldStorageTests",
            dependencies: [
                "HeraldDomain", "HeraldStorage", "HeraldSQLite", "HeraldPostgres", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        /// The console, the API, the command line and the delivery client, through the application.
        .testTarget(
            name: "HeraldTests",
            dependencies: [
                "HeraldConsole", "HeraldMicroHTTPD", "HeraldStorage", "HeraldSQLite", "HeraldPostgres", "HeraldHTTP", "HeraldDomain",
                "HeraldDelivery", "HeraldPush", "PushMock", "CZlib", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ]
)
