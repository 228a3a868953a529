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
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
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
        /// Request and Response values, form and multipart parsing: HTTP without a socket.
        .target(name: "HeraldHTTP"),
        /// The HTTP adapter: the only code that touches libmicrohttpd.
        .target(
            name: "HeraldMicroHTTPD",
            dependencies: [
                "CMicroHTTPD", "HeraldHTTP",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// Plain value types shared by the console, the API and the delivery client.
        .target(name: "HeraldDomain"),
        /// The delivery client: fetches the feed, decides what to show and when, reports events.
        .target(name: "HeraldDelivery", dependencies: ["HeraldDomain"]),
        /// SQLite through GRDB: the database value, migrations and the stores.
        .target(
            name: "HeraldStorage",
            dependencies: [
                "HeraldDomain",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API: the event insert loop binds values without boxing them, and
                // a read-only database is told apart from a failing one.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        /// Routing, middleware and the features of the console and API.
        .target(
            name: "HeraldConsole",
            dependencies: [
                "HeraldHTTP", "HeraldDomain", "HeraldStorage",
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldConsole", "HeraldMicroHTTPD", "HeraldStorage", "HeraldDomain", "HeraldDelivery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "HeraldTests",
            dependencies: [
                "HeraldConsole", "HeraldMicroHTTPD", "HeraldStorage", "HeraldHTTP", "HeraldDomain", "HeraldDelivery",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ]
)
