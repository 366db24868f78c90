// Text that may hold any bytes — file names, and messages that name them —
// as ferry shows it: UTF-8 is checked by one rule (RFC 3629), and a line for
// a person shows every byte that is no printable character as an escape, so
// a name with a line break or a stray byte stays on its own line, readable.
// JSON has its own form of the same bytes (JsonWriter::Escape).
//
// Thread-safety: pure functions.
#ifndef FERRY_TEXT_H_
#define FERRY_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "ferry/export.h"

namespace ferry {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 (also for ASCII: the
// caller looks at bytes below 0x80 itself).
FERRY_EXPORT size_t Utf8Length(std::string_view s, size_t i);

// s for one line of a message or listing: control characters (C0, DEL and
// C1; the line and paragraph separators U+2028/2029 and the bidirectional
// controls U+202A..202E, U+2066..2069) and bytes that are not UTF-8 as \xHH
// (each byte), a backslash as \\,
// everything else as it is (in the manner of GNU ls --quoting-style=escape
// and Python's repr(), one escape form for all), so the bytes can be read
// back: the bytes "a", line feed, "b", 0xff are shown as a\x0ab\xff.
FERRY_EXPORT std::string Printable(std::string_view s);

}  // namespace ferry

#endif  // FERRY_TEXT_H_
