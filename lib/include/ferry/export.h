// Symbol visibility for libferry. The library is built with hidden visibility;
// everything in the public headers that callers use is marked FERRY_EXPORT.
#ifndef FERRY_EXPORT_H_
#define FERRY_EXPORT_H_

#if defined(FERRY_STATIC_DEFINE)
#define FERRY_EXPORT
#elif defined(_WIN32)
#if defined(FERRY_COMPILE_LIBRARY)
#define FERRY_EXPORT __declspec(dllexport)
#else
#define FERRY_EXPORT __declspec(dllimport)
#endif
#else
#define FERRY_EXPORT [[gnu::visibility("default")]]
#endif

#endif  // FERRY_EXPORT_H_
