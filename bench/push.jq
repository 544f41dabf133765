# The push of SPEC.md (jsonpath naming) written in jq, as a jq user would: the yardstick the
# benchmark compares cbl-attachments with. Run as: jq -c -f bench/push.jq
def escape_key: gsub("\\\\"; "\\\\") | gsub("\\."; "\\.") | gsub("\\["; "\\[");
def name($path): "$" + ($path | map(if type == "number" then "[\(.)]" else "." + escape_key end) | join(""));
def blobs($path):
  if type == "object" then
    if ($path | length) > 0 and .["@type"] == "blob" then [[$path, .]]
    else [to_entries[] | select(($path | length) > 0 or .key != "_attachments")
          | .key as $k | .value | blobs($path + [$k])] | add // []
    end
  elif type == "array" then [to_entries[] | .key as $i | .value | blobs($path + [$i])] | add // []
  else [] end;
(blobs([]) | map(select(.[1].digest | type == "string"))) as $found
| if ($found | length) == 0 and (has("_attachments") | not) then .
  else ._attachments = (((._attachments // {}) | with_entries(select(.key | test("^\\$[.\\[]") | not)))
        + ($found | map({key: name(.[0]), value: (.[1] | del(.["@type"]))}) | from_entries))
  end
