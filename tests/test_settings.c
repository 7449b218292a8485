// SPDX-License-Identifier: BSD-3-Clause
/* test_settings.c - the one strict parser of settings (bfo_setting.h) and
 * the transports' tables behind bfo_net_settings and bfo_net_options_set:
 * every type takes its syntax and refuses garbage with a sentence, and
 * every table row is one that parser can serve. */
#include "bfo_test.h"
#include "bfo_net.h"

#include <ctype.h>

static void test_size_takes_digits_and_one_suffix_and_refuses_garbage(void **state)
{
    static const struct {
        const char *s;
        unsigned long long want;
    } good[] = { { "0", 0 }, { "4096", 4096 }, { "64K", 65536 }, { "64k", 65536 }, { "2M", 2u << 20 },
                 { "1G", 1ull << 30 }, { "18446744073709551615", 18446744073709551615ull } };
    /* "12Q" and "1.5K" were read as 12 and 1 by two of the four parsers
     * this one replaces, "64Q" as an empty message by a third */
    static const char *const bad[] = { "", "K", "12Q", "-4K", "+4", " 64", "64 ", "1.5K", "64KB", "0x10", "1e3",
                                       "18446744073709551616", "17179869184G", "64K,8" };
    unsigned long long x;
    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        x = 7;
        if (bfo_parse_size(good[i].s, 0, ~0ull, &x) != 0 || x != good[i].want)
            fail_msg("size \"%s\": %llu, want %llu", good[i].s, x, good[i].want);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        x = 7;
        if (bfo_parse_size(bad[i], 0, ~0ull, &x) == 0)
            fail_msg("size \"%s\" taken as %llu", bad[i], x);
        assert_int_equal(x, 7); /* nothing stored */
    }
    assert_int_equal(bfo_parse_size("64K", 1, 65535, &x), -1); /* the range */
    assert_int_equal(bfo_parse_size("0", 1, 10, &x), -1);
}

/* The prefix form, for lists: it stops after the suffix, and the caller
 * checks the separator. */
static void test_size_prefix_stops_after_the_suffix(void **state)
{
    const char *end;
    unsigned long long x;
    (void)state;
    assert_int_equal(bfo_size_prefix("8,4K", &end, &x), 0);
    assert_int_equal(x, 8);
    assert_string_equal(end, ",4K");
    assert_int_equal(bfo_size_prefix(end + 1, &end, &x), 0);
    assert_int_equal(x, 4096);
    assert_string_equal(end, "");
    assert_int_equal(bfo_size_prefix(",8", &end, &x), -1);
}

typedef struct opts {
    int i;
    unsigned u;
    int64_t ns;
    size_t sz;
    int flag;
    int off;
} opts;

static const bfo_setting rows[] = {
    { "i", BFO_SETTING_INT, BFO_SETTING_AT(opts, i), 14, 1, 31, 0, "an int" },
    { "u", BFO_SETTING_INT, BFO_SETTING_AT(opts, u), 10000, 1, 3600000, 0, "an unsigned" },
    { "ms", BFO_SETTING_MS, BFO_SETTING_AT(opts, ns), 10, 0, 60000, BFO_SETTING_OFF, "ms" },
    { "sz", BFO_SETTING_SIZE, BFO_SETTING_AT(opts, sz), 1 << 20, 1, 1 << 30, 0, "a size" },
    { "b", BFO_SETTING_BOOL, BFO_SETTING_AT(opts, flag), 0, 0, 1, 0, "a bool" },
    { "off", BFO_SETTING_SIZE, BFO_SETTING_AT(opts, off), 2 << 20, 1, 1 << 30, BFO_SETTING_OFF, "or off" },
};

static void test_each_type_stores_its_member_in_its_unit(void **state)
{
    opts o;
    char why[160];
    (void)state;
    memset(&o, 0, sizeof o);
    assert_int_equal(bfo_setting_parse(&rows[0], "6", &o, why, sizeof why), 0);
    assert_int_equal(o.i, 6);
    assert_int_equal(bfo_setting_parse(&rows[1], "3600000", &o, why, sizeof why), 0);
    assert_int_equal(o.u, 3600000u);
    assert_int_equal(bfo_setting_parse(&rows[2], "0.5", &o, why, sizeof why), 0);
    assert_int_equal(o.ns, 500000); /* ms in, ns stored */
    assert_int_equal(bfo_setting_parse(&rows[2], "off", &o, why, sizeof why), 0);
    assert_int_equal(o.ns, -1);
    o.ns = 0;
    assert_int_equal(bfo_setting_parse(&rows[2], "0", &o, why, sizeof why), 0); /* 0 is off too */
    assert_int_equal(o.ns, -1);
    assert_int_equal(bfo_setting_parse(&rows[3], "64K", &o, why, sizeof why), 0);
    assert_int_equal(o.sz, 65536);
    assert_int_equal(bfo_setting_parse(&rows[4], "1", &o, why, sizeof why), 0);
    assert_int_equal(o.flag, 1);
    assert_int_equal(bfo_setting_parse(&rows[5], "off", &o, why, sizeof why), 0);
    assert_int_equal(o.off, -1);
    assert_int_equal(bfo_setting_unset(&rows[5], &o), 0);
    o.off = 0;
    assert_int_equal(bfo_setting_unset(&rows[5], &o), 1);
    /* nothing outside its member written */
    assert_int_equal(o.i, 6);
    assert_int_equal(o.sz, 65536);
}

static void test_garbage_refused_with_a_sentence_and_nothing_stored(void **state)
{
    static const struct {
        int row;
        const char *v, *says;
    } bad[] = {
        { 0, "x", "not an integer from 1 to 31" }, { 0, "32", "from 1 to 31" }, { 0, "0", "from 1 to 31" },
        { 0, "6x", "integer" },  { 0, "", "integer" },  { 0, " 6", "integer" },
        { 1, "-1", "from 1 to 3600000" },          { 2, "soon", "milliseconds from 0 to 60000, or off" },
        { 2, "1e3", "milliseconds" },              { 2, "nan", "milliseconds" }, { 2, "-5", "milliseconds" },
        { 2, "60001", "milliseconds" },            { 2, "0.0000001", "milliseconds" },
        { 3, "lots", "not a size from 1 to 1073741824 bytes" }, { 3, "2G", "size" }, { 3, "off", "size" },
        { 3, "0", "size" },                        { 4, "yes", "not 0 or 1" }, { 4, "2", "0 or 1" },
        { 5, "-3", "size from 1 to 1073741824 bytes (digits, then K, M or G), or off" },
    };
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        opts o;
        char why[160] = "";
        memset(&o, 0, sizeof o);
        if (bfo_setting_parse(&rows[bad[i].row], bad[i].v, &o, why, sizeof why) == 0)
            fail_msg("%s=\"%s\" taken", rows[bad[i].row].name, bad[i].v);
        if (!strstr(why, bad[i].says))
            fail_msg("%s=\"%s\": \"%s\" does not say \"%s\"", rows[bad[i].row].name, bad[i].v, why, bad[i].says);
        for (size_t k = 0; k < sizeof o; k++)
            assert_int_equal(((unsigned char *)&o)[k], 0);
    }
}

/* Every transport's table: rows the parser serves (a known type, a 4- or
 * 8-byte member, a default in range, a help sentence), names that make
 * variables (lower case, unique in the transport), and each one settable
 * by name through bfo_net_options_set with its own default, which lands
 * in bfo_net_options and nowhere the caller would not expect. */
static void test_every_table_row_is_served_by_the_parser_and_settable_by_name(void **state)
{
    const char *tp;
    int n, total = 0;
    (void)state;
    for (int i = 0; bfo_net_settings(i, &tp, &n); i++) {
        const bfo_setting *t = bfo_net_settings(i, &tp, &n);
        for (int k = 0; k < n; k++) {
            bfo_net_options opt, zero;
            char why[200], v[32];
            assert_true(t[k].type >= BFO_SETTING_SIZE && t[k].type <= BFO_SETTING_BOOL);
            assert_true(t[k].size == 4 || t[k].size == 8);
            assert_true(t[k].help && strlen(t[k].help) > 10);
            if (t[k].def < t[k].min || t[k].def > t[k].max)
                fail_msg("%s.%s: default %g outside %g..%g", tp, t[k].name, t[k].def, t[k].min, t[k].max);
            for (const char *p = t[k].name; *p; p++)
                assert_true(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_');
            for (int j = 0; j < k; j++)
                assert_string_not_equal(t[j].name, t[k].name);
            memset(&opt, 0, sizeof opt);
            memset(&zero, 0, sizeof zero);
            snprintf(v, sizeof v, "%.15g", t[k].def);
            if (bfo_net_options_set(&opt, tp, t[k].name, v, why, sizeof why) != BFO_OK)
                fail_msg("%s.%s=%s (its default): %s", tp, t[k].name, v, why);
            assert_memory_not_equal(&opt, &zero, sizeof opt);
            total++;
        }
    }
    assert_true(total >= 4); /* the TCP rows at least: beacon_ms, notsent_lowat, ... */
}

static void test_options_set_by_name_lands_in_the_transports_member(void **state)
{
    bfo_net_options opt;
    char why[200];
    (void)state;
    memset(&opt, 0, sizeof opt);
    assert_int_equal(bfo_net_options_set(&opt, "tcp", "beacon_ms", "5", why, sizeof why), BFO_OK);
    assert_int_equal(opt.tcp.beacon_interval_ns, 5000000);
    assert_int_equal(bfo_net_options_set(&opt, "tcp", "notsent_lowat", "off", why, sizeof why), BFO_OK);
    assert_int_equal(opt.tcp.notsent_lowat, -1);
    assert_int_equal(bfo_net_options_set(&opt, "shm", "ring_bytes", "4M", why, sizeof why), BFO_OK);
    assert_int_equal(opt.shm.ring_bytes, 4u << 20);
    assert_int_equal(bfo_net_options_set(&opt, "tcp", "beacon_ms", "soon", why, sizeof why), BFO_ERR_INVALID);
    assert_non_null(strstr(why, "milliseconds"));
    assert_int_equal(opt.tcp.beacon_interval_ns, 5000000); /* kept */
    assert_int_equal(bfo_net_options_set(&opt, "tcp", "nosuch", "1", why, sizeof why), BFO_ERR_INVALID);
    assert_non_null(strstr(why, "no setting nosuch"));
    assert_int_equal(bfo_net_options_set(&opt, "pigeon", "beacon_ms", "1", why, sizeof why), BFO_ERR_INVALID);
    assert_non_null(strstr(why, "no transport pigeon"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_takes_digits_and_one_suffix_and_refuses_garbage),
        cmocka_unit_test(test_size_prefix_stops_after_the_suffix),
        cmocka_unit_test(test_each_type_stores_its_member_in_its_unit),
        cmocka_unit_test(test_garbage_refused_with_a_sentence_and_nothing_stored),
        cmocka_unit_test(test_every_table_row_is_served_by_the_parser_and_settable_by_name),
        cmocka_unit_test(test_options_set_by_name_lands_in_the_transports_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
