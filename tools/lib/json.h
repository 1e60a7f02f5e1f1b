/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The tools' --json output: stdout then carries exactly one JSON document
 * (RFC 8259), people's text goes to stderr. Every string a tool prints
 * passes through tool_json_str(): interface names, CPU models and roxed's
 * status text may hold quotes, backslashes or control bytes.
 */
#ifndef ROXE_TOOL_JSON_H
#define ROXE_TOOL_JSON_H

#include <stdio.h>

/* s as a JSON string, quotes included; NULL prints null. Bytes that are not
 * valid UTF-8 come out as U+FFFD, so the document stays valid. */
void tool_json_str(FILE *f, const char *s);
/* "key": value pairs: the key escaped, then ": ". */
void tool_json_key(FILE *f, const char *key);
/* A number with printf's fmt (e.g. "%.3f"); NaN and infinities, which JSON
 * cannot carry, print null. */
void tool_json_num(FILE *f, const char *fmt, double v);

#endif /* ROXE_TOOL_JSON_H */
