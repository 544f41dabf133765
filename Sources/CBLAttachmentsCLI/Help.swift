/// What `--help` says before the modes.
let helpIntroduction = """
  Usage: cbl-attachments (--push | --pull | --upgrade | --list | --check) [OPTION]... [FILE]...

  Convert between Couchbase Lite 2 blobs ({"@type":"blob",...} anywhere in a document) and the
  top-level "_attachments" that Sync Gateway, Couchbase Lite 1.x, CouchDB and PouchDB use.
  Reads JSON documents from FILEs (or standard input when there are none, or for -), writes
  one compact document per line to standard output.
  """

/// What `--help` says after the options.
let helpEnding = """
  Exit status: 0 every document converted; 1 a document was rejected, --check found a
  problem, or --strict saw a warning; 2 usage error, unreadable input or failed write.

  Examples:
    # load Sync Gateway (or CouchDB) with the attachments' bytes; plain --push writes none
    cbl-attachments --push --blobs app.cblite2 --bulk-docs 100 dump.ndjson \\
      | parallel --pipe -N1 --block 64M -q curl -sS -H 'Content-Type: application/json' \\
          --data-binary @- http://sg:4985/db/_bulk_docs
    # pull a _changes response in place
    curl -sS 'http://sg:4985/db/_changes?include_docs=true' \\
      | cbl-attachments --pull --format changes
    # what Sync Gateway, CouchDB or Couchbase Lite would refuse
    cbl-attachments --check dump.ndjson
    # blobs used more than once
    cbl-attachments --list dump.ndjson | jq -s 'group_by(.digest) | map(select(length > 1))'

  Full documentation: man cbl-attachments (in the source tree: man -l man/cbl-attachments.1)
  """

/// The text of `--help`: the modes and options come from ``optionTable``.
let helpText: String = {
  let modes = optionTable.filter(\.isMode).flatMap(\.helpLines)
  let options = optionTable.filter { !$0.isMode }.flatMap(\.helpLines)
  return
    ([helpIntroduction, "", "Modes (exactly one):"] + modes + ["", "Options:"] + options
    + ["", helpEnding]).joined(separator: "\n")
}()
