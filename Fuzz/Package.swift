// swift-tools-version:6.1
import PackageDescription

/// libFuzzer targets for Herald's hand-written parsers, kept apart from the main package so that its
/// ordinary builds never see `-sanitize=fuzzer`. Built by `make fuzz` and `make test` into `.build-fuzz`:
/// `swift build --package-path Fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address`.
/// A debug build, so `@testable import` reaches the parsers that are internal to HeraldConsole.
let package = Package(
    name: "HeraldFuzz",
    dependencies: [
        .package(name: "Herald", path: ".."),
        // The encoder the PostgreSQL array target compares with, at the version Herald resolves.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        /// libFuzzer's driver entry point, declared for Swift.
        .systemLibrary(name: "CLibFuzzer"),
        /// One binary for every target (`HERALD_FUZZ_TARGET` chooses), so CI links it once.
        .executableTarget(
            name: "herald-fuzz",
            dependencies: [
                "CLibFuzzer",
                .product(name: "HeraldHTTP", package: "Herald"),
                .product(name: "HeraldDomain", package: "Herald"),
                .product(name: "HeraldConsole", package: "Herald"),
                .product(name: "HeraldPostgres", package: "Herald"),
                .product(name: "HeraldPush", package: "Herald"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ]
)
