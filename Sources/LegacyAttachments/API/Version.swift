internal import CYajl

/// Versions, for `--version`.
public enum LegacyAttachmentsVersion {
  /// This package's version.
  public static let current = "2.4.0"

  /// The version of the yajl library loaded at run time, e.g. `2.1.0`.
  public static var yajl: String {
    let number = Int(yajl_version())
    return "\(number / 10000).\(number / 100 % 100).\(number % 100)"
  }
}
