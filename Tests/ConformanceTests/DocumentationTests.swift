import Foundation
import Testing

// The documentation's links and file references: every relative link leads to a file of the
// repository (and to a heading of it, for `#anchor`), and every repository path or script the
// prose names in backticks is there. (A page that cites a file outside the repository sends its
// reader nowhere.)

@Suite("Documentation: links and the files it names")
struct DocumentationTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// The pages: the README, the docs folder, and the other READMEs and notes of the repository.
  static let pages: [String] = {
    var pages = ["README.md", "CHANGELOG.md", "Interop/README.md", "examples/data/api/README.md"]
    let docs =
      (try? FileManager.default.contentsOfDirectory(
        atPath: root.appendingPathComponent("docs").path)) ?? []
    pages += docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    return pages
  }()

  /// Every file of the repository (paths from its root), build products and git aside.
  static let files: Set<String> = {
    var files = Set<String>()
    let base = root.path + "/"
    guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
    while let path = walker.nextObject() as? String {
      if path.hasPrefix(".build") || path.hasPrefix(".git/") || path == ".git"
        || path.hasPrefix("bench/out") || path.hasPrefix("Fuzz/.build")
      {
        walker.skipDescendants()
        continue
      }
      files.insert(path)
      _ = base
    }
    return files
  }()

  /// A relative path with its `.` and `..` steps taken (and no trailing `/`).
  static func normalized(_ path: String) -> String {
    var steps: [Substring] = []
    for step in path.split(separator: "/") {
      if step == "." { continue }
      if step == "..", let last = steps.last, last != ".." {
        steps.removeLast()
      } else {
        steps.append(step)
      }
    }
    return steps.joined(separator: "/")
  }

  /// The page's text outside fenced code blocks.
  static func prose(_ page: String) throws -> String {
    let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
    var inFence = false
    return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
      if line.hasPrefix("```") {
        inFence.toggle()
        return false
      }
      return !inFence
    }.joined(separator: "\n")
  }

  /// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as
  /// `-`.
  static func anchor(_ heading: String) -> String {
    String(
      heading.lowercased().compactMap { character -> Character? in
        if character == " " { return "-" }
        if character.isLetter || character.isNumber || character == "-" || character == "_" {
          return character
        }
        return nil
      })
  }

  static func anchors(_ page: String) throws -> Set<String> {
    Set(
      try prose(page).split(separator: "\n").filter { $0.hasPrefix("#") }.map {
        anchor(String($0.drop { $0 == "#" }.dropFirst()))
      })
  }

  @Test("every relative link leads to a file of the repository, and to a heading there")
  func links() throws {
    var broken: [String] = []
    let link = /\[[^\]]*\]\(([^)\s]+)\)/
    for page in Self.pages {
      let folder = (page as NSString).deletingLastPathComponent
      for match in try Self.prose(page).matches(of: link) {
        let target = String(match.1)
        if target.hasPrefix("http://") || target.hasPrefix("https://") { continue }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        var file = page
        if !parts[0].isEmpty {
          file = Self.normalized(folder.isEmpty ? String(parts[0]) : folder + "/" + parts[0])
          guard Self.files.contains(file) else {
            broken.append("\(page): \(target) (no file \(file))")
            continue
          }
        }
        if parts.count == 2, file.hasSuffix(".md"),
          !(try Self.anchors(file)).contains(String(parts[1]))
        {
          broken.append("\(page): \(target) (no heading #\(parts[1]) in \(file))")
        }
      }
    }
    #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
  }

  @Test("every repository path, script and page the prose names in backticks is there")
  func namedFiles() throws {
    var missing: [String] = []
    let code = /`([^`]+)`/
    let folders = [
      "bench/", "scripts/", "examples/", "docs/", "Sources/", "Tests/", "Interop/",
      "man/", "Fuzz/",
    ]
    let basenames = Set(Self.files.map { ($0 as NSString).lastPathComponent })
    for page in Self.pages {
      for match in try Self.prose(page).matches(of: code) {
        let token = String(match.1.split(separator: " ").first ?? match.1)
        let named = folders.contains { token.hasPrefix($0) }
        let script = [".md", ".py", ".sh"].contains { token.hasSuffix($0) }
        guard named || script else { continue }
        let trimmed = token.hasSuffix("/") ? String(token.dropLast()) : token
        if Self.files.contains(trimmed) || (!named && basenames.contains(trimmed)) { continue }
        missing.append("\(page): `\(token)`")
      }
    }
    #expect(missing.isEmpty, "\(missing.joined(separator: "\n"))")
  }
}

@Suite("Documentation: the README gets a newcomer to the right command")
struct ReadmeTests {
  static let root = DocumentationTests.root

  static func read(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  @Test(
    "the README is short, its quick start is two commands, and loading comes first with --blobs")
  func readme() throws {
    let readme = try Self.read("README.md")
    #expect(readme.utf8.count < 25_000, "\(readme.utf8.count) bytes")
    let quickStart = try #require(readme.range(of: "## Quick start"))
    let block = try #require(
      readme.range(of: "```sh\n", range: quickStart.upperBound..<readme.endIndex))
    let end = try #require(readme.range(of: "```", range: block.upperBound..<readme.endIndex))
    #expect(readme[block.upperBound..<end.lowerBound] == "make demo\nmake test\n")
    // The cheat sheet: loading first, with the bytes; the warning about plain --push before it.
    let sheet = try #require(readme.range(of: "## Which command?"))
    let firstRow = try #require(
      readme.range(of: "| load ", range: sheet.upperBound..<readme.endIndex))
    let warning = try #require(readme.range(of: "Plain `--push` writes the metadata"))
    #expect(warning.lowerBound < firstRow.lowerBound)
    let row = readme[firstRow.lowerBound...].prefix { $0 != "\n" }
    #expect(row.contains("Sync Gateway") && row.contains("--push --blobs"))
    // The tasks a newcomer asks for, each with a row.
    for task in [
      "load a dump into Sync Gateway", "pull a CouchDB `_changes` body", "list blobs",
      "find what Sync Gateway, CouchDB or Couchbase Lite would refuse",
      "keep going past bad lines",
    ] {
      #expect(readme.contains("| " + task), "no row: \(task)")
    }
    // No claim of tags that do not exist.
    #expect(!readme.contains("releases are tagged"))
  }

  @Test("the man page's first example and --help's load Sync Gateway with the bytes")
  func firstExamples() throws {
    let manual = try Self.read("man/cbl-attachments.1")
    let examples = try #require(manual.range(of: ".SH EXAMPLES"))
    let first = try #require(
      manual.range(of: ".nf\n", range: examples.upperBound..<manual.endIndex))
    let line = manual[first.upperBound...].prefix { $0 != "\n" }
    #expect(line.contains("\\-\\-push \\-\\-blobs"), "\(line)")
    let help = try Self.read("Sources/CBLAttachmentsCLI/Help.swift")
    let helpExamples = try #require(help.range(of: "Examples:"))
    let command = help[helpExamples.upperBound...].split(separator: "\n").first {
      $0.contains("cbl-attachments")
    }
    #expect(command?.contains("--push --blobs") == true, "\(command ?? "")")
  }
}
