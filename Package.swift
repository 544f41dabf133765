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
    .target(
      name: "LegacyAttachments",
      dependencies: ["CYajl"]
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
