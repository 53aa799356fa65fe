/*
 * Tracepoint provider of ust_fields.c: one event class per family of CTF field types, so that
 * the reference traces (tests/fixtures/lttng216/) hold each type lttng-ust can write, in
 * CTF 2 and in CTF 1.8. Uses the lttng-ust 2.13+ API (it builds against Debian 12's 2.13 as
 * well as sid's 2.16; the blob event class only exists from 2.16 on). Laid out as lttng-ust's
 * own examples are, one field macro a line: not clang-format's layout.
 */
// clang-format off
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ust_fields

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./ust_fields_tp.h"

#if !defined(UST_FIELDS_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define UST_FIELDS_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>
#include <lttng/ust-version.h>

/* The fixed-length and variable-length blob fields (CTF 2 blob field classes) are new in 2.16. */
#if LTTNG_UST_MAJOR_VERSION > 2 || (LTTNG_UST_MAJOR_VERSION == 2 && LTTNG_UST_MINOR_VERSION >= 16)
#define UST_FIELDS_HAVE_BLOBS 1
#else
#define UST_FIELDS_HAVE_BLOBS 0
#endif

/* An enumeration with single values, a range and an automatic value (the next one: 10). */
LTTNG_UST_TRACEPOINT_ENUM(ust_fields, phase,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("IDLE", 0)
		lttng_ust_field_enum_value("RUN", 1)
		lttng_ust_field_enum_range("WAIT", 2, 9)
		lttng_ust_field_enum_auto("DONE")
	)
)

/* Integers: every size, signed and unsigned, hexadecimal display base, big-endian. */
LTTNG_UST_TRACEPOINT_EVENT(ust_fields, ints,
	LTTNG_UST_TP_ARGS(uint32_t, thread, uint32_t, i),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int8_t, s8, -(int8_t)(i % 100))
		lttng_ust_field_integer(uint8_t, u8, (uint8_t)(i * 7))
		lttng_ust_field_integer(int16_t, s16, -(int16_t)(i * 13))
		lttng_ust_field_integer(uint16_t, u16, (uint16_t)(i * 251))
		lttng_ust_field_integer(int32_t, s32, -(int32_t)(i * 100003))
		lttng_ust_field_integer(uint32_t, u32, thread * 1000000u + i)
		lttng_ust_field_integer(int64_t, s64, -(int64_t)i * 1000000007LL)
		lttng_ust_field_integer(uint64_t, u64, 0xfedcba9800000000ULL + i)
		lttng_ust_field_integer_hex(uint32_t, x32, 0xdead0000u + i)
		lttng_ust_field_integer_network(uint32_t, be32, i)
	)
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(ust_fields, ints, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/*
 * Text and compounds: a string, an enumeration, a static array and a sequence of integers,
 * and a static and a dynamic array of characters (CTF text arrays).
 */
LTTNG_UST_TRACEPOINT_EVENT(ust_fields, compound,
	LTTNG_UST_TP_ARGS(uint32_t, i, const char *, name, const int32_t *, values,
		uint32_t, n_values),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(name, name)
		lttng_ust_field_enum(ust_fields, phase, int32_t, phase, (int32_t)(i % 11))
		lttng_ust_field_array(int32_t, arr4, values, 4)
		lttng_ust_field_sequence(int32_t, seq, values, uint32_t, n_values)
		lttng_ust_field_array_text(char, text8, name, 8)
		lttng_ust_field_sequence_text(char, seqtext, name, uint8_t, n_values)
	)
)

/* Floating point numbers: binary32 and binary64. */
LTTNG_UST_TRACEPOINT_EVENT(ust_fields, floats,
	LTTNG_UST_TP_ARGS(uint32_t, i),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_float(float, f32, (float)i / 4.0f)
		lttng_ust_field_float(double, f64, (double)i * -1.0e-3)
	)
)

/* No payload at all. */
LTTNG_UST_TRACEPOINT_EVENT(ust_fields, empty,
	LTTNG_UST_TP_ARGS(),
	LTTNG_UST_TP_FIELDS()
)

#if UST_FIELDS_HAVE_BLOBS
/* Blobs (2.16): a fixed-length one with a media type, and a variable-length one. */
LTTNG_UST_TRACEPOINT_EVENT(ust_fields, blobs,
	LTTNG_UST_TP_ARGS(const uint8_t *, bytes, uint16_t, n_bytes),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_fixed_length_blob(fixed16, bytes, 16, "application/octet-stream")
		lttng_ust_field_variable_length_blob(var, bytes, uint16_t, n_bytes, NULL)
	)
)
#endif

#endif /* UST_FIELDS_TP_H */

#include <lttng/tracepoint-event.h>
