/* LNTUNE_API marks what liblntune.so exports: the C ABI (lntune.h) and the
 * public C++ API (lntune.hpp, types.hpp). Everything else in the library,
 * including the internal static libraries linked into it, is compiled with
 * hidden visibility (-fvisibility=hidden -fvisibility-inlines-hidden), and a
 * version script (cmake/lntune.map) keeps out anything else, so the exported
 * set is exactly what these headers declare. tests/exported_symbols.sh checks
 * it. C and C++. */
#ifndef LNTUNE_EXPORT_H
#define LNTUNE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define LNTUNE_API __attribute__((visibility("default")))
#else
#define LNTUNE_API
#endif

#endif /* LNTUNE_EXPORT_H */
