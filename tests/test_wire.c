// SPDX-License-Identifier: BSD-3-Clause
/* test_wire.c - the wire format: every fragment type round-trips, every
 * malformed frame gets its named error, nothing is read past the frame.
 * Frames are copied into heap buffers of their exact length, so that under
 * AddressSanitizer (make check SAN=1) a read past the end is caught. */
#include "bfo_test.h"
#include "bfo_samples.h"

static bfo_handle H(uint32_t index, uint32_t gen)
{
    bfo_handle h;
    h.index = index;
    h.gen = gen;
    return h;
}

/* The engine's parse of a flagless MATCH (bfo__parse_plain_match, the
 * eager message's) against bfo_frame_parse: when it takes a frame, the
 * full parse takes it too, with the same fields; checked on every frame
 * parsed here, every sample and every random one. */
static void plain_match_agrees(const uint8_t *buf, size_t len, int rc, const bfo_frame *full)
{
    bfo_frame f;
    if (!bfo__parse_plain_match(&f, buf, len))
        return;
    if (rc != BFO_OK)
        fail_msg("bfo__parse_plain_match took a frame bfo_frame_parse refuses (%s)", bfo_errname(rc));
    assert_int_equal(f.type, full->type);
    assert_int_equal(f.flags, full->flags);
    assert_int_equal(f.h.match.type, full->h.match.type);
    assert_int_equal(f.h.match.flags, full->h.match.flags);
    assert_int_equal(f.h.match.ctx, full->h.match.ctx);
    assert_int_equal(f.h.match.src, full->h.match.src);
    assert_int_equal(f.h.match.tag, full->h.match.tag);
    assert_true(f.h.match.seq == full->h.match.seq);
    assert_ptr_equal(f.payload, full->payload);
    assert_int_equal(f.payload_len, full->payload_len);
}

/* Decodes (and validates) a copy of buf[0..len) in a buffer of exactly len
 * bytes, so that a read past len is caught.  f->payload points into the
 * copy: it lives until the next call. */
static int parse_exact(bfo_frame *f, const uint8_t *buf, size_t len)
{
    static uint8_t *copy;
    int rc;
    free(copy);
    copy = (uint8_t *)malloc(len ? len : 1);
    assert_non_null(copy);
    if (len)
        memcpy(copy, buf, len);
    rc = bfo_frame_parse(f, copy, len);
    plain_match_agrees(copy, len, rc, f);
    return rc;
}

/* Which frames the plain MATCH parse takes: a MATCH without flags and
 * with its reserved field zero, with or without data; nothing else. */
static void test_plain_match_parse(void **state)
{
    uint8_t buf[64];
    bfo_frame f;
    (void)state;
    assert_int_equal(sample_encode(BFO_FRAG_MATCH, 0, buf, sizeof buf), BFO_HDR_MATCH_SIZE);
    memcpy(buf + BFO_HDR_MATCH_SIZE, "payload!", 8);
    for (size_t len = 0; len <= BFO_HDR_MATCH_SIZE + 8; len++) {
        int want = len >= BFO_HDR_MATCH_SIZE;
        assert_int_equal(bfo__parse_plain_match(&f, buf, len), want);
        parse_exact(&f, buf, len); /* the same fields as the full parse */
    }
    buf[1] = BFO_FLAG_CANCEL; /* a cancelled send's: the full parse's */
    assert_int_equal(bfo__parse_plain_match(&f, buf, BFO_HDR_MATCH_SIZE), 0);
    assert_int_equal(parse_exact(&f, buf, BFO_HDR_MATCH_SIZE), BFO_OK);
    assert_int_equal(bfo__parse_plain_match(&f, buf, BFO_HDR_MATCH_SIZE + 1), 0);
    buf[1] = 0x80; /* undefined flag */
    assert_int_equal(bfo__parse_plain_match(&f, buf, BFO_HDR_MATCH_SIZE), 0);
    buf[1] = 0;
    buf[3] = 1; /* reserved */
    assert_int_equal(bfo__parse_plain_match(&f, buf, BFO_HDR_MATCH_SIZE), 0);
    assert_int_equal(parse_exact(&f, buf, BFO_HDR_MATCH_SIZE), BFO_ERR_BAD_FIELD);
    buf[3] = 0;
    for (size_t i = 0; i < BFO_FRAG_COUNT; i++) { /* no other type */
        int type = (int)i + 1;
        size_t n = sample_encode(type, 0, buf, sizeof buf);
        if (type != BFO_FRAG_MATCH && n)
            assert_int_equal(bfo__parse_plain_match(&f, buf, n), 0);
    }
}

/* One valid header of each fragment type: the sample of its layout
 * (bfo_samples.h, through BFO_FRAGMENTS: a new type is covered at once). */
static size_t encode_sample(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    return sample_encode(type, flags, buf, cap);
}

#define FRAG_CODE(name, code, layout, payload, dedup) code,
static const int all_types[] = { BFO_FRAGMENTS(FRAG_CODE) };
#define FRAG_PAYLOAD(name, code, layout, payload, dedup) payload,
static const int has_payload[] = { BFO_FRAGMENTS(FRAG_PAYLOAD) };
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

static void test_every_type_round_trips(void **state)
{
    (void)state;
    assert_int_equal(N_TYPES, BFO_FRAG_COUNT);
    for (size_t i = 0; i < N_TYPES; i++) {
        uint8_t buf[BFO_MAX_HDR_SIZE + 8];
        bfo_frame f;
        size_t n = encode_sample(all_types[i], 0, buf, sizeof buf);
        assert_int_equal(n, bfo_frag_hdr_size(all_types[i]));
        size_t len = n;
        if (has_payload[i]) { /* three bytes of data, or one key */
            memcpy(buf + n, "abcd", 4);
            len += has_payload[i] == BFO_PAYLOAD_DATA ? 3 : 4;
        }
        if (parse_exact(&f, buf, len) != BFO_OK)
            fail_msg("%s does not round-trip", bfo_frag_name(all_types[i]));
        assert_int_equal(f.type, all_types[i]);
        assert_int_equal(f.payload_len, len - n);
        if (has_payload[i])
            assert_memory_equal(f.payload, "abc", 3);
        else
            assert_null(f.payload);
        /* too small a buffer to encode into */
        assert_int_equal(encode_sample(all_types[i], 0, buf, n - 1), 0);
    }
}

static void test_fields_survive_encoding(void **state)
{
    uint8_t buf[64];
    bfo_frame f;
    (void)state;

    assert_int_equal(encode_sample(BFO_FRAG_RNDV, BFO_FLAG_RESTART | BFO_FLAG_PIN, buf, sizeof buf),
                     BFO_HDR_RNDV_SIZE);
    assert_int_equal(parse_exact(&f, buf, BFO_HDR_RNDV_SIZE), BFO_OK);
    assert_int_equal(f.flags, BFO_FLAG_RESTART | BFO_FLAG_PIN);
    assert_int_equal(f.h.rndv.ctx, 7);
    assert_int_equal(f.h.rndv.src, 3);
    assert_int_equal(f.h.rndv.tag, 5);
    assert_int_equal(f.h.rndv.seq, 10);
    assert_int_equal(f.h.rndv.rseq, 2);
    assert_true(f.h.rndv.msg_len == (1u << 20));
    assert_true(bfo_handle_eq(f.h.rndv.sreq, H(4, 1)));
    assert_true(bfo_handle_eq(f.h.rndv.dreq, H(8, 2)));

    assert_int_equal(encode_sample(BFO_FRAG_FIN, 0, buf, sizeof buf), BFO_HDR_FIN_SIZE);
    assert_int_equal(parse_exact(&f, buf, BFO_HDR_FIN_SIZE), BFO_OK);
    assert_int_equal(f.h.fin.rseq, 1);
    assert_int_equal(f.h.fin.slot, 3);
    assert_true(f.h.fin.length == (1u << 20));

    assert_int_equal(encode_sample(BFO_FRAG_NOTIFY, 0, buf, sizeof buf), BFO_HDR_RESTART_SIZE);
    assert_int_equal(parse_exact(&f, buf, BFO_HDR_RESTART_SIZE), BFO_OK);
    assert_int_equal(f.h.restart.rseq, 65535); /* 16 bits, not 8 */

    assert_int_equal(encode_sample(BFO_FRAG_PROBE, 0, buf, sizeof buf), BFO_HDR_RAILCTL_SIZE);
    assert_int_equal(parse_exact(&f, buf, BFO_HDR_RAILCTL_SIZE), BFO_OK);
    assert_true(f.h.railctl.nonce == 0x0102030405060708ull);
}

/* The MATCH header byte for byte: little-endian, 16 bytes. */
static void test_match_golden_bytes(void **state)
{
    /* type, flags, reserved u16, ctx u32, src u32, tag u32, seq u64 */
    static const uint8_t want[24] = { 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
                                      0x03, 0x00, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11,
                                      0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };
    uint8_t buf[24];
    (void)state;
    assert_int_equal(encode_sample(BFO_FRAG_MATCH, 0, buf, sizeof buf), 24);
    assert_memory_equal(buf, want, 24);
    assert_true(BFO_HDR_MATCH_SIZE <= 24);
}

static void test_truncated_at_every_length(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TYPES; i++) {
        uint8_t buf[BFO_MAX_HDR_SIZE];
        bfo_frame f;
        size_t n = encode_sample(all_types[i], 0, buf, sizeof buf);
        for (size_t len = 0; len < n; len++)
            if (parse_exact(&f, buf, len) != BFO_ERR_TRUNCATED)
                fail_msg("%s cut to %zu bytes is not BFO_ERR_TRUNCATED",
                         bfo_frag_name(all_types[i]), len);
    }
}

static void test_unknown_types(void **state)
{
    int unknown = 0;
    (void)state;
    for (int t = 0; t < 256; t++) {
        uint8_t buf[BFO_MAX_HDR_SIZE] = { 0 };
        bfo_frame f;
        if (bfo_frag_name(t))
            continue;
        buf[0] = (uint8_t)t;
        assert_int_equal(parse_exact(&f, buf, sizeof buf), BFO_ERR_BAD_TYPE);
        assert_int_equal(bfo_frag_hdr_size(t), 0);
        unknown++;
    }
    assert_int_equal(unknown, 256 - BFO_FRAG_COUNT);
}

static void test_undefined_flags(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TYPES; i++) {
        for (int bit = 0; bit < 8; bit++) {
            uint8_t buf[BFO_MAX_HDR_SIZE];
            bfo_frame f;
            size_t n = encode_sample(all_types[i], 0, buf, sizeof buf);
            int rc;
            if (bfo_frag_flags_allowed(all_types[i]) & (1u << bit))
                continue;
            buf[1] = (uint8_t)(1u << bit);
            rc = parse_exact(&f, buf, n);
            if (rc != BFO_ERR_BAD_FLAGS)
                fail_msg("%s with flag bit %d: %s", bfo_frag_name(all_types[i]), bit,
                         bfo_errname(rc));
        }
    }
}

static void test_reserved_fields(void **state)
{
    uint8_t buf[64];
    bfo_frame f;
    (void)state;
    /* match: rsvd at 2; ack and frag: at 4; restart: at 12 */
    struct { int type; size_t off; } cases[] = {
        { BFO_FRAG_MATCH, 2 }, { BFO_FRAG_ACK, 4 }, { BFO_FRAG_FRAG, 4 }, { BFO_FRAG_NOTIFY, 12 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = encode_sample(cases[i].type, 0, buf, sizeof buf);
        size_t len = n + (cases[i].type == BFO_FRAG_FRAG); /* a FRAG carries data */
        buf[n] = 'x';
        assert_int_equal(parse_exact(&f, buf, len), BFO_OK);
        buf[cases[i].off] = 1;
        if (parse_exact(&f, buf, len) != BFO_ERR_BAD_FIELD)
            fail_msg("%s with a reserved byte set is not BFO_ERR_BAD_FIELD",
                     bfo_frag_name(cases[i].type));
    }
}

static void test_bytes_after_a_header_without_payload(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TYPES; i++) {
        uint8_t buf[BFO_MAX_HDR_SIZE + 1];
        bfo_frame f;
        size_t n;
        if (has_payload[i] != BFO_PAYLOAD_NONE)
            continue;
        n = encode_sample(all_types[i], 0, buf, sizeof buf);
        buf[n] = 0;
        if (parse_exact(&f, buf, n + 1) != BFO_ERR_BAD_LENGTH)
            fail_msg("%s with a trailing byte is not BFO_ERR_BAD_LENGTH",
                     bfo_frag_name(all_types[i]));
    }
}

/* RGET and PUT carry keys, one u32 per rail: any number of whole keys
 * (none at all for a sender without RDMA keys), never a piece of one. */
static void test_keys_after_rget_and_put_are_whole_u32s(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TYPES; i++) {
        uint8_t buf[BFO_MAX_HDR_SIZE + 64];
        bfo_frame f;
        size_t n;
        if (has_payload[i] != BFO_PAYLOAD_KEYS)
            continue;
        n = encode_sample(all_types[i], 0, buf, sizeof buf);
        for (size_t k = 0; k < 64; k++)
            buf[n + k] = (uint8_t)(k + 1);
        for (size_t extra = 0; extra <= 64; extra++) {
            int rc = parse_exact(&f, buf, n + extra);
            if (extra % 4 == 0) {
                if (rc != BFO_OK)
                    fail_msg("%s with %zu keys: %d", bfo_frag_name(all_types[i]), extra / 4, rc);
                assert_int_equal(f.payload_len, extra);
                if (extra)
                    assert_memory_equal(f.payload, buf + n, extra);
            } else if (rc != BFO_ERR_BAD_LENGTH) {
                fail_msg("%s with %zu bytes of keys is not BFO_ERR_BAD_LENGTH",
                         bfo_frag_name(all_types[i]), extra);
            }
        }
    }
}

/* What the layout cannot say: handles, lengths, ranges. */
static void test_field_semantics(void **state)
{
    uint8_t buf[96];
    bfo_frame f;
    size_t n;
    (void)state;

    { /* RNDV without a sender handle */
        bfo_hdr_rndv h = { .type = BFO_FRAG_RNDV, .flags = 0, .ctx = 1, .src = 2, .tag = 3, .seq = 4, .rseq = 0, .msg_len = 100, .sreq = H(0, 0), .dreq = H(0, 0) };
        n = bfo_hdr_rndv_encode(&h, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
        h.sreq = H(1, 1); /* a restart must name the receive request ... */
        h.flags = BFO_FLAG_RESTART;
        n = bfo_hdr_rndv_encode(&h, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
        h.flags = 0; /* ... and a first RNDV must not */
        h.dreq = H(2, 2);
        n = bfo_hdr_rndv_encode(&h, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
        h.dreq = H(0, 0); /* more eager bytes than the message has */
        h.msg_len = 2;
        n = bfo_hdr_rndv_encode(&h, buf, sizeof buf);
        memcpy(buf + n, "abc", 3);
        assert_int_equal(parse_exact(&f, buf, n + 3), BFO_ERR_BAD_LENGTH);
        h.msg_len = 3;
        n = bfo_hdr_rndv_encode(&h, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n + 3), BFO_OK);
    }
    { /* FRAG: empty, and a range past 2^64 */
        bfo_hdr_frag h = { BFO_FRAG_FRAG, 0, 0, H(1, 1), 10 };
        n = bfo_hdr_frag_encode(&h, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_LENGTH);
        h.offset = UINT64_MAX;
        n = bfo_hdr_frag_encode(&h, buf, sizeof buf);
        buf[n] = 'z';
        assert_int_equal(parse_exact(&f, buf, n + 1), BFO_ERR_BAD_FIELD);
    }
    { /* PUT: empty range, overflow */
        bfo_hdr_put h = { BFO_FRAG_PUT, 0, 0, 0, H(1, 1), H(2, 1), 0, 0, 0 };
        n = bfo_hdr_put_encode(&h, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
        h.length = 2;
        h.offset = UINT64_MAX;
        n = bfo_hdr_put_encode(&h, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
    }
    { /* FIN, ACK and restart messages need their handles */
        bfo_hdr_fin fin = { .type = BFO_FRAG_FIN, .flags = 0, .rseq = 0, .slot = 0, .dreq = H(0, 0), .offset = 0, .length = 1 };
        bfo_hdr_ack ack = { BFO_FRAG_ACK, 0, 0, H(1, 1), H(0, 0), 0 };
        bfo_hdr_restart rs = { .type = BFO_FRAG_RESTARTNACK, .flags = 0, .rseq = 1, .ctx = 0, .seq = 0, .src = 0, .sreq = H(1, 1), .dreq = H(0, 0) };
        n = bfo_hdr_fin_encode(&fin, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
        n = bfo_hdr_ack_encode(&ack, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
        n = bfo_hdr_restart_encode(&rs, buf, sizeof buf);
        assert_int_equal(parse_exact(&f, buf, n), BFO_ERR_BAD_FIELD);
    }
}

/* bfo_frame_encode writes back, for every type, the header it decoded. */
static void test_frame_encode_round_trips(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TYPES; i++) {
        uint8_t buf[BFO_MAX_HDR_SIZE + 1], out[BFO_MAX_HDR_SIZE];
        bfo_frame f;
        size_t n = encode_sample(all_types[i], 0, buf, sizeof buf);
        buf[n] = 'x'; /* a FRAG carries data */
        assert_int_equal(parse_exact(&f, buf, n + (has_payload[i] == BFO_PAYLOAD_DATA ? 1u : 0u)), BFO_OK);
        memset(out, 0xee, sizeof out);
        if (bfo_frame_encode(&f, out, sizeof out) != n || memcmp(out, buf, n) != 0)
            fail_msg("%s does not encode back to its bytes", bfo_frag_name(all_types[i]));
        assert_int_equal(bfo_frame_encode(&f, out, n - 1), 0);
    }
    { /* the frame's type and flags, not the header member's */
        bfo_frame f;
        uint8_t out[BFO_MAX_HDR_SIZE];
        memset(&f, 0, sizeof f);
        f.type = BFO_FRAG_RESTARTACK;
        f.h.restart.type = BFO_FRAG_NOTIFY;
        f.h.restart.rseq = 7;
        assert_int_equal(bfo_frame_encode(&f, out, sizeof out), BFO_HDR_RESTART_SIZE);
        assert_int_equal(out[0], BFO_FRAG_RESTARTACK);
        assert_int_equal(bfo_get16(out + 2), 7);
        f.type = 0x7e; /* no such type */
        assert_int_equal(bfo_frame_encode(&f, out, sizeof out), 0);
    }
}

/* bfo_frag_fields describes every byte of every header after type and
 * flags, in order; each reserved field set makes the frame malformed; the
 * payload flag agrees with BFO_FRAGMENTS. */
static void test_field_tables(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TYPES; i++) {
        const char *name = bfo_frag_name(all_types[i]);
        size_t nf, off = 2;
        const bfo_field *fl = bfo_frag_fields(all_types[i], &nf);
        assert_non_null(fl);
        assert_int_equal(bfo_frag_has_payload(all_types[i]), has_payload[i] == BFO_PAYLOAD_DATA);
        assert_int_equal(bfo_frag_has_keys(all_types[i]), has_payload[i] == BFO_PAYLOAD_KEYS);
        for (size_t k = 0; k < nf; k++) {
            if (fl[k].offset != off)
                fail_msg("%s: field %s at %u, want %zu", name, fl[k].name, fl[k].offset, off);
            assert_true(fl[k].kind == BFO_FIELD_HANDLE ? fl[k].width == 8
                                                       : fl[k].width == 1 || fl[k].width == 2 ||
                                                             fl[k].width == 4 || fl[k].width == 8);
            off += fl[k].width;
            if (fl[k].kind == BFO_FIELD_RESERVED) {
                uint8_t buf[BFO_MAX_HDR_SIZE + 1];
                bfo_frame f;
                size_t n = encode_sample(all_types[i], 0, buf, sizeof buf);
                size_t len = n + (has_payload[i] == BFO_PAYLOAD_DATA ? 1u : 0u);
                buf[n] = 'x';
                buf[fl[k].offset + fl[k].width - 1] = 0x80;
                if (parse_exact(&f, buf, len) != BFO_ERR_BAD_FIELD)
                    fail_msg("%s with %s set is not BFO_ERR_BAD_FIELD", name, fl[k].name);
            }
        }
        if (off != bfo_frag_hdr_size(all_types[i]))
            fail_msg("%s: the fields end at %zu, the header at %zu", name, off,
                     bfo_frag_hdr_size(all_types[i]));
    }
    {
        size_t nf = 5;
        assert_null(bfo_frag_fields(0x7e, &nf));
        assert_int_equal(nf, 0);
        assert_int_equal(bfo_frag_has_payload(0x7e), 0);
    }
}

/* Random bytes of random lengths: always a named result, never a crash
 * (and, under ASan, never a read past the frame). */
static void test_random_bytes_get_named_results(void **state)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int counts[64] = { 0 };
    (void)state;
    for (int i = 0; i < 200000; i++) {
        uint8_t buf[80];
        bfo_frame f;
        size_t len;
        int rc;
        for (size_t j = 0; j < sizeof buf; j++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[j] = (uint8_t)x;
        }
        len = (size_t)(x >> 40) % sizeof buf;
        if (i & 1) /* half the time a known type, to get past the first check */
            buf[0] = (uint8_t)all_types[(x >> 20) % N_TYPES];
        if (i & 2)
            buf[1] = 0;
        rc = parse_exact(&f, buf, len);
        assert_true(rc <= 0 && rc > -64);
        assert_string_not_equal(bfo_errname(rc), "BFO_ERR_UNKNOWN");
        counts[-rc]++;
    }
    print_message("200000 random frames: ok %d, truncated %d, bad type %d, bad flags %d, "
                  "bad field %d, bad length %d\n", counts[0], counts[10], counts[11], counts[12],
                  counts[13], counts[14]);
    assert_true(counts[0] > 0 && counts[10] > 0 && counts[11] > 0 && counts[13] > 0);
}

static void test_restart_sequence_wraps(void **state)
{
    (void)state;
    assert_true(bfo_rseq_cmp(1, 0) > 0);
    assert_true(bfo_rseq_cmp(0, 1) < 0);
    assert_true(bfo_rseq_cmp(5, 5) == 0);
    assert_true(bfo_rseq_cmp(0, 65535) > 0);  /* 65535 -> 0 is one step forward */
    assert_true(bfo_rseq_cmp(65535, 0) < 0);
    assert_true(bfo_rseq_cmp(300, 200) > 0);  /* more than 8 bits */
    assert_true(bfo_rseq_cmp(40000, 10000) > 0); /* 30000 ahead: newer */
    assert_true(bfo_rseq_cmp(10000, 50000) > 0); /* 50000 + 25536 wraps to 10000 */
    assert_true(bfo_rseq_cmp(50000, 10000) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_round_trips),
        cmocka_unit_test(test_fields_survive_encoding),
        cmocka_unit_test(test_match_golden_bytes),
        cmocka_unit_test(test_plain_match_parse),
        cmocka_unit_test(test_truncated_at_every_length),
        cmocka_unit_test(test_unknown_types),
        cmocka_unit_test(test_undefined_flags),
        cmocka_unit_test(test_reserved_fields),
        cmocka_unit_test(test_bytes_after_a_header_without_payload),
        cmocka_unit_test(test_keys_after_rget_and_put_are_whole_u32s),
        cmocka_unit_test(test_field_semantics),
        cmocka_unit_test(test_frame_encode_round_trips),
        cmocka_unit_test(test_field_tables),
        cmocka_unit_test(test_random_bytes_get_named_results),
        cmocka_unit_test(test_restart_sequence_wraps),
    };
    return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
