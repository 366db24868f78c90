// The INI dialect of ~/.aws/config and ~/.aws/credentials, read as the AWS
// CLI reads it (Python's configparser + botocore's configloader): sections
// "[name]"; "key = value" or "key: value" (keys lower-cased, both sides
// trimmed; no inline comments); whole-line comments '#' or ';'; a more
// indented line continues the value above, which is how the nested form
//   s3 =
//     addressing_style = path
// is written. A section or key given twice in one file is an error, as in
// the CLI. Messages name the file and line, never a value (values can be
// secrets).
//
// Thread-safety: plain functions on values.
#ifndef FERRY_REMOTE_AWS_INI_H_
#define FERRY_REMOTE_AWS_INI_H_

#include <map>
#include <string>
#include <string_view>

#include "ferry/result.h"

namespace ferry::remote {

using IniSection = std::map<std::string, std::string>;
using IniFile = std::map<std::string, IniSection>;  // by raw section name

// file names the text in messages. InvalidArgument on a syntax error.
Result<IniFile> ParseAwsIni(std::string_view text, std::string_view file);

// The nested "sub_key = value" lines of a value that began with an empty
// first line ("s3 =\n  addressing_style = path"); an empty map for a plain
// value. Sub-keys keep their case. InvalidArgument names file and key.
Result<IniSection> ParseAwsIniNested(std::string_view value,
                                     std::string_view file,
                                     std::string_view key);

}  // namespace ferry::remote

#endif  // FERRY_REMOTE_AWS_INI_H_
