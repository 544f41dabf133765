# A second, independent statement of what --push (default jsonpath naming) does, in jq, for the
# examples to check the tool against. Use:  jq -c -L examples/lib 'include "push-model"; push_model'
# jq re-encodes numbers and strings, so compare the tool's output after `jq -c .`, not raw.

# The jsonpath name of a path array: ["photos","gallery",2] -> "$.photos.gallery[2]";
# "\", "." and "[" in keys are escaped with a backslash.
def jsonpath:
  "$" + (map(if type == "number" then "[\(.)]"
             else "." + gsub("(?<c>[\\\\.\\[])"; "\\\(.c)") end) | join(""));

# Paths of the blobs in the input, in document order, not descending into a blob.
def blobpaths:
  [paths(type == "object" and .["@type"] == "blob")] as $all
  | $all | map(select(. as $p | any($all[]; length < ($p | length) and . == $p[:length]) | not));

# Is this _attachments key one that a jsonpath push made?
def synthesized: test("^\\$[.\\[]");

def push_model:
  if type != "object" then error("not an object") else . end
  | [ (del(._attachments) | blobpaths)[] as $p
      | {key: ($p | jsonpath), value: (getpath($p) | del(.["@type"]))}
      | select(.value.digest | type == "string") ] as $new
  | if (._attachments | type) == "object" then
      ._attachments = ((._attachments | with_entries(select(.key | synthesized | not)))
                       + ($new | from_entries))
    elif ($new | length) > 0 then ._attachments = ($new | from_entries)
    else . end;
