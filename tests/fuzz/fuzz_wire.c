// SPDX-License-Identifier: BSD-3-Clause
/* fuzz_wire.c - frame decoding (bfo_frame_parse: gen/bfo_codec.h and the
 * checks of include/fsm/bfo_wire.h) on arbitrary bytes.
 *
 * Beyond "no crash, nothing read past the frame" (ASan: the input is an
 * exact-size buffer), a frame that parses:
 *   - has the header size of its type, its payload is the rest of the input
 *     (NULL when empty), and a type without payload has none;
 *   - encodes back (bfo_frame_encode, its layout's encoder) to the same
 *     header bytes (every reserved byte was zero, every field kept its value);
 *   - one byte shorter is BFO_ERR_TRUNCATED at the header, and a type that
 *     carries no payload is BFO_ERR_BAD_LENGTH with one byte more;
 *   - passes bfo_frame_validate again, and its flags are allowed for its type.
 * A frame that does not parse gets one of the named errors.
 */
#include <string.h>

#include "bfo.h"
#include "fuzz.h"

/* Parses a copy of buf[0..len) in a buffer of exactly len bytes. */
static int parse_copy(const uint8_t *buf, size_t len, size_t alloc_len)
{
    bfo_frame f;
    uint8_t *c = (uint8_t *)malloc(alloc_len ? alloc_len : 1);
    int rc;
    FUZZ_CHECK(c != NULL, "out of memory");
    memcpy(c, buf, len < alloc_len ? len : alloc_len);
    if (alloc_len > len)
        memset(c + len, 0, alloc_len - len);
    rc = bfo_frame_parse(&f, c, alloc_len);
    free(c);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bfo_frame f, g;
    uint8_t hdr[BFO_MAX_HDR_SIZE];
    int rc = bfo_frame_parse(&f, data, size);

    FUZZ_CHECK(rc == bfo_frame_parse(&g, data, size), "parse is not deterministic");
    if (size < 2)
        FUZZ_CHECK(rc == BFO_ERR_TRUNCATED, "%zu bytes: %s", size, bfo_errname(rc));
    else if (!bfo_frag_hdr_size(data[0]))
        FUZZ_CHECK(rc == BFO_ERR_BAD_TYPE, "type 0x%02x: %s", data[0], bfo_errname(rc));
    if (size >= 4) { /* restart-sequence order is antisymmetric (but for the half-way point) */
        uint16_t a = bfo_get16(data), b = bfo_get16(data + 2);
        if ((uint16_t)(a - b) != 0x8000)
            FUZZ_CHECK(bfo_rseq_cmp(a, b) == -bfo_rseq_cmp(b, a), "rseq %u %u", a, b);
    }
    if (rc != BFO_OK) {
        FUZZ_CHECK(rc == BFO_ERR_TRUNCATED || rc == BFO_ERR_BAD_TYPE || rc == BFO_ERR_BAD_FLAGS ||
                       rc == BFO_ERR_BAD_FIELD || rc == BFO_ERR_BAD_LENGTH,
                   "unexpected error %d", rc);
        return 0;
    }

    size_t hs = bfo_frag_hdr_size(f.type);
    FUZZ_CHECK(hs != 0 && hs <= size, "type 0x%02x header %zu, frame %zu", f.type, hs, size);
    FUZZ_CHECK(f.type == data[0] && f.flags == data[1], "type/flags not the input's");
    FUZZ_CHECK((f.flags & ~bfo_frag_flags_allowed(f.type)) == 0, "flags 0x%02x", f.flags);
    FUZZ_CHECK(f.payload_len == size - hs, "payload %zu of %zu - %zu", f.payload_len, size, hs);
    FUZZ_CHECK(f.payload_len ? f.payload == data + hs : f.payload == NULL, "payload pointer");
    FUZZ_CHECK(bfo_frag_has_payload(f.type) || (bfo_frag_has_keys(f.type) && f.payload_len % 4 == 0) ||
                   f.payload_len == 0,
               "payload on type 0x%02x", f.type);
    FUZZ_CHECK(bfo_frame_validate(&f) == BFO_OK, "validates once, not twice");

    /* the header's type and flags fields agree with the frame's */
    FUZZ_CHECK(f.h.match.type == f.type && f.h.match.flags == f.flags, "header type/flags");
    FUZZ_CHECK(bfo_frame_encode(&f, hdr, sizeof hdr) == hs, "encoder size");
    FUZZ_CHECK(memcmp(hdr, data, hs) == 0, "type 0x%02x does not encode back to its bytes", f.type);
    FUZZ_CHECK(bfo_frame_encode(&f, hdr, hs - 1) == 0, "encoder wrote into too small a buffer");

    FUZZ_CHECK(parse_copy(data, size, hs - 1) == BFO_ERR_TRUNCATED, "header cut short");
    if (!bfo_frag_has_payload(f.type)) /* no data: a byte more is no frame (keys: not whole) */
        FUZZ_CHECK(parse_copy(data, size, size + 1) == BFO_ERR_BAD_LENGTH, "a byte too many");

    switch (f.type) { /* what validate promises, stated once more from the fields */
    case BFO_FRAG_FRAG:
        FUZZ_CHECK(f.payload_len > 0 && !bfo_handle_is_null(f.h.frag.dreq) &&
                       f.h.frag.offset + f.payload_len >= f.h.frag.offset,
                   "FRAG fields");
        break;
    case BFO_FRAG_RNDV:
        FUZZ_CHECK(f.payload_len <= f.h.rndv.msg_len, "RNDV first bytes beyond its length");
        FUZZ_CHECK(!!(f.flags & BFO_FLAG_RESTART) == !bfo_handle_is_null(f.h.rndv.dreq),
                   "RNDV restart flag and dreq");
        break;
    case BFO_FRAG_PUT:
        FUZZ_CHECK(f.h.put.length > 0 && f.h.put.offset + f.h.put.length > f.h.put.offset,
                   "PUT range");
        break;
    case BFO_FRAG_FIN:
        FUZZ_CHECK(f.h.fin.offset + f.h.fin.length >= f.h.fin.offset, "FIN range");
        break;
    default: break;
    }
    return 0;
}
