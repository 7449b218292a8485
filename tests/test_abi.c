// SPDX-License-Identifier: BSD-3-Clause
/* test_abi.c - a program compiled with other layout options than a library
 * it links is refused, by name, before anything of its is touched.
 *
 * This unit plays the library, built with the build's layout: lib_init is
 * its bfo_engine_init_abi.  The callers are tests/abi_caller.c compiled
 * again with BFO_MAX_RAILS or BFO_MAX_ACTIONS changed, or with the same
 * options (abi_caller.h, the Makefile's ABI_CALLERS): each lays out its own
 * engine, and hands it and its BFO_ABI_HERE to lib_init, as a program does
 * through a library that sets the engine up for it.
 */
#include "bfo_test.h"

#include "abi_caller.h"
#include "bfo_engine.h"

static int lib_init(void *engine, const bfo_config *cfg, const bfo_backend *be, void *mem,
                    size_t mem_len, const bfo_abi *caller)
{
    return bfo_engine_init_abi((bfo_engine *)engine, cfg, be, mem, mem_len, 1, caller);
}

static int post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    (void)ctx, (void)peer, (void)rail, (void)iov, (void)iovcnt, (void)token;
    return 0;
}

/* What bfo_abi_check must say about one option: "NAME is A in the caller,
 * B in the library", or nothing when they agree. */
static void expect_named(const char *why, const char *name, unsigned caller, unsigned lib)
{
    char want[128];
    snprintf(want, sizeof want, "%s is %u in the caller, %u in the library", name, caller, lib);
    if (caller != lib) {
        if (!strstr(why, want))
            fail_msg("the message does not say \"%s\": \"%s\"", want, why);
    } else if (strstr(why, name)) {
        fail_msg("%s agrees, yet the message names it: \"%s\"", name, why);
    }
}

/* A caller built with other options: refused with BFO_ERR_ABI, its engine
 * and the guard after it untouched, and the message names what differs. */
static void refused(const abi_caller *c)
{
    char why[256];
    int touched = -1, nrails = 0;
    print_message("caller %s: BFO_MAX_RAILS %u, BFO_MAX_ACTIONS %u, sizeof(bfo_engine) %zu; "
                  "library: %d, %d, %zu\n", c->name, c->max_rails, c->max_actions,
                  c->sizeof_engine, BFO_MAX_RAILS, BFO_MAX_ACTIONS, sizeof(bfo_engine));
    assert_true(c->max_rails != BFO_MAX_RAILS || c->max_actions != BFO_MAX_ACTIONS);
    assert_int_equal(c->init_through(lib_init, &touched, &nrails), BFO_ERR_ABI);
    assert_int_equal(touched, 0);
    assert_int_equal(nrails, -1);
    assert_int_equal(bfo_abi_check(c->here(), BFO_ABI_HERE, why, sizeof why), BFO_ERR_ABI);
    print_message("  refused: %s\n", why);
    expect_named(why, "BFO_MAX_RAILS", c->max_rails, BFO_MAX_RAILS);
    expect_named(why, "BFO_MAX_ACTIONS", c->max_actions, BFO_MAX_ACTIONS);
    assert_non_null(strstr(why, "pkg-config --cflags bfo"));
}

static void test_more_rails_in_the_caller_is_refused_by_name(void **state)
{
    (void)state;
    assert_true(abi_caller_rails16.max_rails != BFO_MAX_RAILS);
    refused(&abi_caller_rails16);
}

static void test_fewer_rails_in_the_caller_is_refused_by_name(void **state)
{
    (void)state;
    assert_true(abi_caller_rails2.max_rails != BFO_MAX_RAILS);
    refused(&abi_caller_rails2);
}

static void test_other_max_actions_in_the_caller_is_refused_by_name(void **state)
{
    (void)state;
    assert_int_equal(abi_caller_actions8.max_rails, BFO_MAX_RAILS);
    refused(&abi_caller_actions8);
}

/* Another unit with the same options: its descriptor is another object with
 * the same contents, and the library sets its engine up. */
static void test_same_layout_in_another_unit_is_taken(void **state)
{
    char why[256] = "x";
    int touched = -1, nrails = 0;
    (void)state;
    assert_ptr_not_equal(abi_caller_same.here(), BFO_ABI_HERE);
    assert_memory_equal(abi_caller_same.here(), BFO_ABI_HERE, sizeof(bfo_abi));
    assert_int_equal(bfo_abi_check(abi_caller_same.here(), BFO_ABI_HERE, why, sizeof why), BFO_OK);
    assert_string_equal(why, "");
    assert_int_equal(abi_caller_same.init_through(lib_init, &touched, &nrails), BFO_OK);
    assert_int_equal(touched, 1);
    assert_int_equal(nrails, 1); /* the library's write, read with the caller's layout */
}

/* bfo_engine_init is the macro: the caller's own unit, which agrees. */
static void test_engine_init_passes_the_callers_layout(void **state)
{
    static bfo_engine e;
    bfo_config c;
    bfo_backend be;
    (void)state;
    memset(&c, 0, sizeof c);
    memset(&be, 0, sizeof be);
    be.post_send = post_send;
    c.rank = 1;
    c.nranks = 2;
    c.nrails = 2;
    c.max_requests = 2;
    size_t need = bfo_engine_mem_size(&c);
    void *mem = malloc(need);
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, need, 1), BFO_OK);
    assert_int_equal(e.cfg.nrails, 2);
    /* a descriptor that is not this unit's: refused before *e is touched */
    bfo_abi other = *BFO_ABI_HERE;
    other.max_rails++;
    memset(&e, 0x5a, sizeof e);
    assert_int_equal(bfo_engine_init_abi(&e, &c, &be, mem, need, 1, &other), BFO_ERR_ABI);
    assert_int_equal(bfo_engine_init_abi(&e, &c, &be, mem, need, 1, NULL), BFO_ERR_INVALID);
    for (size_t i = 0; i < sizeof e; i++)
        assert_int_equal(((unsigned char *)&e)[i], 0x5a);
    free(mem);
}

static void test_abi_check_messages(void **state)
{
    const bfo_abi *lib = BFO_ABI_HERE;
    bfo_abi c = *lib;
    char why[512];
    (void)state;
    assert_int_equal(BFO_ERR_ABI, -27);
    assert_string_equal(bfo_errname(BFO_ERR_ABI), "BFO_ERR_ABI");
    assert_int_equal(lib->version, BFO_ABI_VERSION);
    assert_int_equal(lib->max_rails, BFO_MAX_RAILS);
    assert_int_equal(lib->max_actions, BFO_MAX_ACTIONS);
    assert_int_equal(lib->sizeof_engine, sizeof(bfo_engine));
    assert_int_equal(lib->sizeof_step, sizeof(bfo_step));

    /* both options: both named, one message */
    c.max_rails = lib->max_rails + 8;
    c.max_actions = lib->max_actions + 4;
    assert_int_equal(bfo_abi_check(&c, lib, why, sizeof why), BFO_ERR_ABI);
    expect_named(why, "BFO_MAX_RAILS", c.max_rails, lib->max_rails);
    expect_named(why, "BFO_MAX_ACTIONS", c.max_actions, lib->max_actions);
    /* options that agree, sizes that do not (another compiler or target) */
    c = *lib;
    c.sizeof_engine += 8;
    c.sizeof_request += 8;
    assert_int_equal(bfo_abi_check(&c, lib, why, sizeof why), BFO_ERR_ABI);
    expect_named(why, "sizeof(bfo_engine)", c.sizeof_engine, lib->sizeof_engine);
    expect_named(why, "sizeof(bfo_request)", c.sizeof_request, lib->sizeof_request);
    expect_named(why, "BFO_MAX_RAILS", c.max_rails, lib->max_rails);
    /* another descriptor version: nothing else is read */
    c = *lib;
    c.version = lib->version + 1;
    c.max_rails = lib->max_rails + 1;
    assert_int_equal(bfo_abi_check(&c, lib, why, sizeof why), BFO_ERR_ABI);
    expect_named(why, "BFO_ABI_VERSION", c.version, lib->version);
    assert_null(strstr(why, "BFO_MAX_RAILS"));
    /* a short buffer: cut, terminated; no buffer at all */
    c = *lib;
    c.max_rails = lib->max_rails + 1;
    memset(why, 'x', sizeof why);
    assert_int_equal(bfo_abi_check(&c, lib, why, 10), BFO_ERR_ABI);
    assert_string_equal(why, "BFO_MAX_R");
    assert_int_equal(why[10], 'x');
    why[0] = 'x';
    assert_int_equal(bfo_abi_check(&c, lib, why, 0), BFO_ERR_ABI);
    assert_int_equal(why[0], 'x');
    assert_int_equal(bfo_abi_check(&c, lib, NULL, 99), BFO_ERR_ABI);
    /* NULL descriptors */
    assert_int_equal(bfo_abi_check(NULL, lib, why, sizeof why), BFO_ERR_INVALID);
    assert_non_null(strstr(why, "BFO_ABI_HERE"));
    assert_int_equal(bfo_abi_check(lib, NULL, NULL, 0), BFO_ERR_INVALID);
    /* equal contents, another object */
    c = *lib;
    assert_int_equal(bfo_abi_check(&c, lib, why, sizeof why), BFO_OK);
    assert_string_equal(why, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_more_rails_in_the_caller_is_refused_by_name),
        cmocka_unit_test(test_fewer_rails_in_the_caller_is_refused_by_name),
        cmocka_unit_test(test_other_max_actions_in_the_caller_is_refused_by_name),
        cmocka_unit_test(test_same_layout_in_another_unit_is_taken),
        cmocka_unit_test(test_engine_init_passes_the_callers_layout),
        cmocka_unit_test(test_abi_check_messages),
    };
    return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
