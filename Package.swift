// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "cbl-attachments",
  products: [
    .library(name: "LegacyAttachments", targets: ["LegacyAttachments"]),
    .executable(name: "cbl-attachments", targets: ["cbl-attachments"]),
  ],
  targets: [
    .systemLibrary(
      name: "CYajl",
      providers: [.apt(["libyajl-dev"])]
    ),
    // OpenSSL's libcrypto: SHA-1, MD5 and base64 for attachment bodies (README, "Attachment
    // bodies", says why this one and not nettle).
    .systemLibrary(
      name: "CCrypto",
      providers: [.apt(["libssl-dev"])]
    ),
    // zlib: gzip as CouchDB writes it, to check the md5 of attachments CouchDB stored
    // compressed (README, "CouchDB").
    .systemLibrary(
      name: "CZlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    .target(
      name: "LegacyAttachments",
      dependencies: ["CYajl", "CCrypto", "CZlib"]
    ),
    // The command line: options (one table: parser, --help, man page), messages, the run.
    .target(
      name: "CBLAttachmentsCLI",
      dependencies: ["LegacyAttachments"]
    ),
    // The executable only calls CBLAttachmentsCLI.
    .executableTarget(
      name: "cbl-attachments",
      dependencies: ["CBLAttachmentsCLI"]
    ),
    // One call per document against the stream API (bench/run.sh and the README's Performance).
    .executableTarget(
      name: "PerDocumentBenchmark",
      dependencies: ["LegacyAttachments"],
      path: "bench/PerDocumentBenchmark"
    ),
    // What the test suites share: a seeded random number generator, file-backed conversion.
    .target(
      name: "TestSupport",
      dependencies: ["LegacyAttachments"],
      path: "Tests/TestSupport"
    ),
    // Unit tests of the library's parts; they reach internal types (@testable: debug builds).
    .testTarget(
      name: "EngineTests",
      dependencies: ["LegacyAttachments", "TestSupport"]
    ),
    // The specification's cases, fuzz regressions and the differential model, through the public
    // (and SPI) API only, so that they also run against the release build that ships.
    .testTarget(
      name: "ConformanceTests",
      dependencies: ["LegacyAttachments", "TestSupport"],
      resources: [.copy("Golden"), .copy("FuzzRegressions")]
    ),
    .testTarget(
      name: "CLITests",
      dependencies: ["cbl-attachments", "CBLAttachmentsCLI", "TestSupport"]
    ),
  ]
)
