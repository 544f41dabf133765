// swift-tools-version:6.0
import PackageDescription

/// Release builds of the engine drop Swift's overflow and exclusivity checks on the per-token path;
/// every such operation there works on offsets the engine itself keeps in range.
let engineFlags: [SwiftSetting] = [
  .unsafeFlags(["-Ounchecked", "-enforce-exclusivity=unchecked"], .when(configuration: .release))
]

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
    .target(
      name: "LegacyAttachments",
      dependencies: ["CYajl"],
      swiftSettings: engineFlags
    ),
    .executableTarget(
      name: "cbl-attachments",
      dependencies: ["LegacyAttachments"]
    ),
    .testTarget(
      name: "LegacyAttachmentsTests",
      dependencies: ["LegacyAttachments"],
      resources: [.copy("Golden"), .copy("FuzzRegressions")]
    ),
    .testTarget(
      name: "CLITests",
      dependencies: ["cbl-attachments"]
    ),
  ]
)
