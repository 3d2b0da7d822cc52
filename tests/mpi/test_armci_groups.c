/* ARMCI API: processor groups (create, create_child, free, rank, size, absolute ids, world and
 * default group, ARMCIX split / dup), allocations on groups (ARMCI_Malloc_group on a reordered
 * world group and on a proper subgroup, zero sizes included) with one-sided operations on them, and
 * the group message collectives. Written against armci.h / armcix.h / message.h only. */
#include "armcitest.h"
#include <armcix.h>

static void test_world_group(void **state)
{
    (void)state;
    ARMCI_Group w;
    ARMCI_Group_get_world(&w);
    int r = -1, n = -1;
    ARMCI_CHECK_OK(ARMCI_Group_rank(&w, &r));
    ARMCI_Group_size(&w, &n);
    ARMCI_CHECK_ALL(r == me_ && n == np_);
    int ok = 1;
    for (int g = 0; g < np_; g++)
        ok &= ARMCI_Absolute_id(&w, g) == g;
    ARMCI_CHECK_ALL(ok);
    ARMCI_Group d;
    ARMCI_Group_get_default(&d); /* the default is the world until set */
    ARMCI_Group_size(&d, &n);
    ARMCI_CHECK_OK(ARMCI_Group_rank(&d, &r));
    ARMCI_CHECK_ALL(r == me_ && n == np_);
}

/* The even ranks, in order: members see their size, rank and absolute ids. */
static void test_group_create_even(void **state)
{
    (void)state;
    int n = (np_ + 1) / 2;
    int *pids = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        pids[i] = 2 * i;
    ARMCI_Group g;
    ARMCI_Group_create(n, pids, &g);
    if (me_ % 2 == 0) {
        int r = -1, s = -1;
        ARMCI_Group_rank(&g, &r);
        ARMCI_Group_size(&g, &s);
        int ok = r == me_ / 2 && s == n;
        for (int i = 0; i < n; i++)
            ok &= ARMCI_Absolute_id(&g, i) == 2 * i;
        ARMCI_CHECK_ALL(ok);
        ARMCI_Group_free(&g); /* by members only (ARMCI-MPI frees garbage on non-members) */
    } else {
        ARMCI_CHECK_ALL(1);
    }
    free(pids);
}

/* The world in reverse order: ARMCI_Malloc_group's pointer array is indexed by group rank. */
static void test_malloc_group_reversed(void **state)
{
    (void)state;
    int *pids = malloc((size_t)np_ * sizeof(int));
    for (int i = 0; i < np_; i++)
        pids[i] = np_ - 1 - i;
    ARMCI_Group g;
    ARMCI_Group_create(np_, pids, &g);
    int gr = -1;
    ARMCI_Group_rank(&g, &gr);
    ARMCI_CHECK_ALL(gr == np_ - 1 - me_);
    void **p = calloc((size_t)np_, sizeof(void *));
    ARMCI_CHECK_OK(ARMCI_Malloc_group(p, (armci_size_t)np_ * sizeof(int), &g));
    for (int i = 0; i < np_; i++) {
        int abs = ARMCI_Absolute_id(&g, i);
        ARMCI_CHECK_OK(ARMCI_PutValueInt(1000 * i + me_, (int *)p[i] + me_, abs));
    }
    ARMCI_Barrier();
    int ok = 1;
    for (int s = 0; s < np_; s++)
        ok &= ARMCI_GetValueInt((int *)p[gr] + s, me_) == 1000 * gr + s;
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    ARMCI_CHECK_OK(ARMCI_Free_group(p[gr], &g));
    ARMCI_Group_free(&g);
    free(p);
    free(pids);
}

/* A proper subgroup (every rank but 0; with 2 ranks a group of one): allocation on the group only
 * (rank 0 takes no part), sizes differ and one member gives 0 bytes, then put / get / acc /
 * strided / vector / read-modify-write between the members, synchronized by fences and group
 * barriers only. */
static void test_subgroup_memory(void **state)
{
    (void)state;
    int n = np_ - 1;
    int *pids = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        pids[i] = i + 1;
    ARMCI_Group g;
    ARMCI_Group_create(n, pids, &g);
    int ok = 1;
    if (me_ != 0) {
        int gr = -1, gs = -1;
        ARMCI_Group_rank(&g, &gr);
        ARMCI_Group_size(&g, &gs);
        ok &= gr == me_ - 1 && gs == n;
        enum { W = 64 }; /* longs per member slot */
        /* group rank 1 (if any) gives 0 bytes; the others room for every member's slot */
        armci_size_t mine = (gr == 1) ? 0 : (armci_size_t)n * W * sizeof(long) + 64;
        void **p = calloc((size_t)n, sizeof(void *));
        ARMCI_LOCAL_OK(ok, ARMCI_Malloc_group(p, mine, &g));
        for (int i = 0; i < n; i++)
            ok &= (i == 1) ? p[i] == NULL : p[i] != NULL;
        long src[W], got[W];
        for (int i = 0; i < W; i++)
            src[i] = 100000L * me_ + i;
        for (int i = 0; i < n; i++) {
            if (i == 1)
                continue;
            int abs = ARMCI_Absolute_id(&g, i);
            long *slot = (long *)p[i] + (size_t)gr * W;
            /* put, accumulate (x2), get back without a fence */
            long two = 2;
            ARMCI_LOCAL_OK(ok, ARMCI_Put(src, slot, W * sizeof(long), abs));
            ARMCI_LOCAL_OK(ok, ARMCI_Acc(ARMCI_ACC_LNG, &two, src, slot, W * sizeof(long), abs));
            ARMCI_LOCAL_OK(ok, ARMCI_Get(slot, got, W * sizeof(long), abs));
            for (int k = 0; k < W; k++)
                ok &= got[k] == 3 * src[k];
            /* strided: every other long of the first 16 set to -k */
            long neg[8];
            for (int k = 0; k < 8; k++)
                neg[k] = -k - 1;
            int sstr = sizeof(long), dstr = 2 * sizeof(long), count[2] = {sizeof(long), 8};
            ARMCI_LOCAL_OK(ok, ARMCI_PutS(neg, &sstr, slot, &dstr, count, 1, abs));
            long back[8];
            ARMCI_LOCAL_OK(ok, ARMCI_GetS(slot, &dstr, back, &sstr, count, 1, abs));
            for (int k = 0; k < 8; k++)
                ok &= back[k] == -k - 1;
            long one = 1;
            ARMCI_LOCAL_OK(ok,
                           ARMCI_AccS(ARMCI_ACC_LNG, &one, neg, &sstr, slot, &dstr, count, 1, abs));
            /* vector: words 17 and 19 */
            long v2[2] = {7, 9}, g2[2] = {0, 0};
            void *vs[2] = {&v2[0], &v2[1]}, *vd[2] = {slot + 17, slot + 19};
            void *gs[2] = {slot + 17, slot + 19}, *gd[2] = {&g2[0], &g2[1]};
            armci_giov_t pv = {vs, vd, sizeof(long), 2}, gv = {gs, gd, sizeof(long), 2};
            ARMCI_LOCAL_OK(ok, ARMCI_PutV(&pv, 1, abs));
            ARMCI_LOCAL_OK(ok, ARMCI_GetV(&gv, 1, abs));
            ok &= g2[0] == 7 && g2[1] == 9;
            ARMCI_LOCAL_OK(ok, ARMCI_AccV(ARMCI_ACC_LNG, &one, &pv, 1, abs));
        }
        ARMCI_AllFence();
        armci_msg_group_barrier(&g);
        /* read-modify-write on a counter hosted by group rank 0 (word W*n of its part) */
        long *ctr = (long *)p[0] + (size_t)n * W;
        int a0 = ARMCI_Absolute_id(&g, 0);
        if (gr == 0)
            ARMCI_LOCAL_OK(ok, ARMCI_PutValueLong(0, ctr, me_));
        ARMCI_AllFence();
        armci_msg_group_barrier(&g);
        long f = -1;
        ARMCI_LOCAL_OK(ok, ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &f, ctr, 1, a0));
        ok &= f >= 0 && f < n;
        ARMCI_AllFence();
        armci_msg_group_barrier(&g);
        ok &= ARMCI_GetValueLong(ctr, a0) == n;
        /* the owner checks its part: every member's slot */
        if (gr != 1) {
            for (int s = 0; s < n; s++) {
                long *slot = (long *)p[gr] + (size_t)s * W;
                ARMCI_LOCAL_OK(ok, ARMCI_Get(slot, got, W * sizeof(long), me_));
                long sv = 100000L * (s + 1);
                for (int k = 0; k < W; k++) {
                    long e = 3 * (sv + k);
                    if (k < 16 && k % 2 == 0)
                        e = 2 * (-(k / 2) - 1);
                    if (k == 17)
                        e = 14;
                    if (k == 19)
                        e = 18;
                    ok &= got[k] == e;
                }
            }
        }
        armci_msg_group_barrier(&g);
        ARMCI_LOCAL_OK(ok, ARMCI_Free_group(p[gr], &g));
        free(p);
        ARMCI_Group_free(&g);
    }
    ARMCI_CHECK_ALL(ok);
    free(pids);
}

/* The default group is the parent of ARMCI_Group_create; create_child takes an explicit parent. */
static void test_default_and_child(void **state)
{
    (void)state;
    int *pids = malloc((size_t)np_ * sizeof(int));
    for (int i = 0; i < np_; i++)
        pids[i] = np_ - 1 - i;
    ARMCI_Group rev, world, child, sub;
    ARMCI_Group_create(np_, pids, &rev); /* parent: world */
    ARMCI_Group_set_default(&rev);
    int first = 0;
    ARMCI_Group_create(1, &first, &sub); /* rank 0 of the default = absolute np-1 */
    int ok = 1;
    if (me_ == np_ - 1) {
        int r = -1, s = -1;
        ARMCI_Group_rank(&sub, &r);
        ARMCI_Group_size(&sub, &s);
        ok &= r == 0 && s == 1 && ARMCI_Absolute_id(&sub, 0) == np_ - 1;
        ARMCI_Group_free(&sub);
    }
    ARMCI_Group_get_world(&world);
    ARMCI_Group_set_default(&world);
    ARMCI_Group d;
    ARMCI_Group_get_default(&d);
    int dr = -1;
    ARMCI_Group_rank(&d, &dr);
    ok &= dr == me_;
    /* child of the reversed group: its ranks 0 and 1 = absolute np-1 and np-2 */
    int two[2] = {0, 1};
    ARMCI_Group_create_child(2, two, &child, &rev);
    if (me_ >= np_ - 2) {
        int r = -1, s = -1;
        ARMCI_Group_rank(&child, &r);
        ARMCI_Group_size(&child, &s);
        ok &= s == 2 && r == np_ - 1 - me_;
        ok &= ARMCI_Absolute_id(&child, 0) == np_ - 1 && ARMCI_Absolute_id(&child, 1) == np_ - 2;
        int x = me_ + 1;
        armci_msg_group_igop(&x, 1, "+", &child);
        ok &= x == (np_) + (np_ - 1);
        ARMCI_Group_free(&child);
    }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Group_free(&rev);
    free(pids);
}

/* Group collectives on the odd / even halves (split by ARMCIX_Group_split) and on a duplicate. */
static void test_group_msg(void **state)
{
    (void)state;
    ARMCI_Group world, half, dup;
    ARMCI_Group_get_world(&world);
    ARMCI_CHECK_OK(ARMCIX_Group_split(&world, me_ % 2, -me_, &half)); /* key: reverse order */
    int hs = -1, hr = -1, n = 0;
    ARMCI_Group_size(&half, &hs);
    ARMCI_Group_rank(&half, &hr);
    int members[64];
    for (int r = me_ % 2; r < np_; r += 2)
        members[n++] = r;
    int ok = hs == n;
    /* reverse order: group rank 0 is the largest member */
    ok &= ARMCI_Absolute_id(&half, 0) == members[n - 1] && hr == n - 1 - me_ / 2;
    int ix[2] = {me_, 1};
    armci_msg_group_igop(ix, 2, "+", &half);
    int want = 0;
    for (int i = 0; i < n; i++)
        want += members[i];
    ok &= ix[0] == want && ix[1] == n;
    long lx = -(long)me_ - 1;
    armci_msg_group_lgop(&lx, 1, "absmax", &half);
    ok &= lx == members[n - 1] + 1;
    long long llx = me_;
    armci_msg_group_llgop(&llx, 1, "min", &half);
    ok &= llx == members[0];
    float fx = 1.5f;
    armci_msg_group_fgop(&fx, 1, "*", &half);
    float fw = 1.0f;
    for (int i = 0; i < n; i++)
        fw *= 1.5f;
    ok &= fx == fw;
    double dx = me_ * 0.5;
    armci_msg_group_dgop(&dx, 1, "max", &half);
    ok &= dx == members[n - 1] * 0.5;
    double gx[2] = {1.0, -(double)me_};
    armci_msg_group_gop_scope(SCOPE_ALL, gx, 2, "+", ARMCI_DOUBLE, &half);
    ok &= gx[0] == n && gx[1] == -(double)want;
    /* broadcast from the member with the largest absolute rank (root given as absolute rank) */
    char buf[32];
    snprintf(buf, sizeof(buf), "from %d", me_);
    armci_msg_group_bcast_scope(SCOPE_ALL, buf, sizeof(buf), members[n - 1], &half);
    char expect[32];
    snprintf(expect, sizeof(expect), "from %d", members[n - 1]);
    ok &= strcmp(buf, expect) == 0;
    armci_msg_group_barrier(&half);
    ARMCI_CHECK_OK(ARMCIX_Group_dup(&half, &dup));
    int ds = -1, dr = -1;
    ARMCI_Group_size(&dup, &ds);
    ARMCI_Group_rank(&dup, &dr);
    ok &= ds == hs && dr == hr;
    ARMCI_CHECK_ALL(ok);
    ARMCI_Group_free(&dup);
    ARMCI_Group_free(&half);
}

/* Node scope within a group (armci_msg_group_gop_scope / armci_msg_group_bcast_scope with
 * SCOPE_NODE): the group's members in the caller's SMP domain (as armci_domain_* report it), on the
 * world group, on the world reversed (ARMCI_Group_create with a permuted list) and on the even
 * ranks in reversed order. The broadcast's root is the domain's member of lowest group rank. */
static void node_scope_in(ARMCI_Group *g, int *ok)
{
    int n = 0, grank = -1, gsum = 0, root = -1;
    ARMCI_Group_size(g, &n);
    ARMCI_Group_rank(g, &grank);
    int mydom = armci_domain_id(ARMCI_DOMAIN_SMP, me_), expect_n = 0, expect_sum = 0;
    for (int r = 0; r < n; r++) {
        int abs = ARMCI_Absolute_id(g, r);
        if (armci_domain_id(ARMCI_DOMAIN_SMP, abs) != mydom)
            continue;
        if (root < 0)
            root = abs;
        expect_n++;
        expect_sum += r;
    }
    int one = 1;
    armci_msg_group_gop_scope(SCOPE_NODE, &one, 1, "+", ARMCI_INT, g);
    gsum = grank;
    armci_msg_group_gop_scope(SCOPE_NODE, &gsum, 1, "+", ARMCI_INT, g);
    long v = me_ == root ? 1000L + root : -1;
    armci_msg_group_bcast_scope(SCOPE_NODE, &v, (int)sizeof(v), root, g);
    int all = 1;
    armci_msg_group_gop_scope(SCOPE_ALL, &all, 1, "+", ARMCI_INT, g);
    if (one != expect_n || gsum != expect_sum || v != 1000L + root || all != n) {
        fprintf(stderr,
                "[rank %d] SCOPE_NODE in a group of %d: count %d (expected %d), rank sum %d "
                "(expected %d), bcast from %d got %ld; SCOPE_ALL count %d\n",
                me_, n, one, expect_n, gsum, expect_sum, root, v, all);
        *ok = 0;
    }
}

static void test_group_node_scope(void **state)
{
    (void)state;
    int ok = 1;
    ARMCI_Group w, rev, even;
    ARMCI_Group_get_world(&w);
    node_scope_in(&w, &ok);
    int *list = malloc((size_t)np_ * sizeof(int)), ne = 0;
    for (int i = 0; i < np_; i++)
        list[i] = np_ - 1 - i;
    ARMCI_Group_create(np_, list, &rev);
    node_scope_in(&rev, &ok);
    for (int i = np_ - 1; i >= 0; i--)
        if (i % 2 == 0)
            list[ne++] = i;
    ARMCI_Group_create(ne, list, &even);
    if (me_ % 2 == 0) {
        node_scope_in(&even, &ok);
        ARMCI_Group_free(&even); /* by members only (ARMCI-MPI frees garbage on non-members) */
    }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Group_free(&rev);
    free(list);
    ARMCI_Barrier();
}

ARMCITEST_MAIN("armci_groups", test_world_group, test_group_create_even, test_malloc_group_reversed,
               test_subgroup_memory, test_default_and_child, test_group_msg, test_group_node_scope)
