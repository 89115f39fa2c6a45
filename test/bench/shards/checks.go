package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// kind is one of the kinds a replica of the operator caches per shard.
type kind struct {
	name    string
	newList func() client.ObjectList
}

// The kinds' names, as the tables show them.
const (
	kindApplication = "Application"
	kindDeployment  = "Deployment"
	kindService     = "Service"
)

var kinds = []kind{
	{kindApplication, func() client.ObjectList { return &sunappsv1.ApplicationList{} }},
	{kindDeployment, func() client.ObjectList { return &appsv1.DeploymentList{} }},
	{kindService, func() client.ObjectList { return &corev1.ServiceList{} }},
}

// listPage is how many objects one LIST page asks for: the sharded lists
// are paginated, so continue tokens are checked with a shard selector too.
const listPage = 2000

// listing is what a (possibly sharded) LIST of a kind returned.
type listing struct {
	// namespaceOf maps "namespace/name" to the namespace.
	namespaceOf map[string]string
	uidOf       map[string]string
	// echoed is the shardInfo.selector of every page ("" when absent).
	echoed []string
}

// list lists the command's objects of k, page by page, with shardSelector
// (none when empty).
func list(ctx context.Context, c client.Client, k kind, shardSelector string) (listing, error) {
	out := listing{namespaceOf: map[string]string{}, uidOf: map[string]string{}}
	cont := ""
	for {
		l := k.newList()
		opts := &client.ListOptions{Limit: listPage, Continue: cont,
			Raw: &metav1.ListOptions{ShardSelector: shardSelector}}
		if err := c.List(ctx, l, opts, client.MatchingLabels{benchLabel: benchValue}); err != nil {
			return listing{}, err
		}
		echo := ""
		if sl, ok := l.(metav1.ShardedListInterface); ok && sl.GetShardInfo() != nil {
			echo = sl.GetShardInfo().Selector
		}
		out.echoed = append(out.echoed, echo)
		if err := meta.EachListItem(l, func(o runtime.Object) error {
			obj := o.(client.Object)
			key := obj.GetNamespace() + "/" + obj.GetName()
			out.namespaceOf[key] = obj.GetNamespace()
			out.uidOf[key] = string(obj.GetUID())
			return nil
		}); err != nil {
			return listing{}, err
		}
		if cont = l.GetContinue(); cont == "" {
			return out, nil
		}
	}
}

// count is how many of the listed objects have a namespace in rg.
func (l listing) count(rg hashRange) int {
	n := 0
	for _, ns := range l.namespaceOf {
		if rg.contains(fnv64a(ns)) {
			n++
		}
	}
	return n
}

// report collects the Markdown the command prints, and the failed checks.
type report struct {
	b        strings.Builder
	failures []string
}

func (r *report) printf(format string, args ...any) { fmt.Fprintf(&r.b, format, args...) }

// check records a check's outcome and returns its table cell.
func (r *report) check(ok bool, what string) string {
	if ok {
		return "pass"
	}
	r.failures = append(r.failures, what)
	return "**FAIL**"
}

// probeGate tells whether the API server honours shardSelector: a LIST
// selecting one namespace's hash must come back smaller than the whole,
// for Applications (a custom resource) and for Services (built in). It
// reports what the server did either way, shardInfo included, and what it
// answers to a selector it refuses.
func probeGate(ctx context.Context, c client.Client, r *report) (bool, error) {
	ns := namespaceName(0)
	sel := selector(shardKey, exactRange(fnv64a(ns)))
	r.printf("## Does the API server honour shardSelector?\n\n")
	r.printf("A LIST with `shardSelector=%s` (the hash of namespace %s alone), against the LIST without:\n\n", sel, ns)
	r.printf("| kind | returned | of | `metadata.shardInfo` |\n|---|---|---|---|\n")
	honoured := true
	for _, kd := range []kind{kinds[0], kinds[2]} {
		all, err := list(ctx, c, kd, "")
		if err != nil {
			return false, err
		}
		one, err := list(ctx, c, kd, sel)
		if err != nil {
			return false, fmt.Errorf("LIST %s with shardSelector %q: %w", kd.name, sel, err)
		}
		honoured = honoured && len(one.namespaceOf) < len(all.namespaceOf)
		r.printf("| %s | %d | %d | %s |\n", kd.name, len(one.namespaceOf), len(all.namespaceOf), echoDescription(one.echoed))
	}
	r.printf("\n")
	// The doc comment of ListOptions.ShardSelector spells a bound '0x0'.
	docExample := fmt.Sprintf("shardRange(%s, '0x0', '0x8000000000000000')", shardKey)
	bad, err := list(ctx, c, kinds[0], docExample)
	switch {
	case err != nil:
		r.printf("A LIST of Applications with `shardSelector=%s` (bounds spelled as in the doc comment of "+
			"ListOptions.ShardSelector): refused, HTTP %d: `%s`\n\n", docExample, statusCode(err), err)
	default:
		r.printf("A LIST of Applications with `shardSelector=%s` (bounds spelled as in the doc comment of "+
			"ListOptions.ShardSelector): accepted, %d Applications returned; `metadata.shardInfo` %s.\n\n",
			docExample, len(bad.namespaceOf), echoDescription(bad.echoed))
	}
	if !honoured {
		r.printf("The server **ignored** the shard selector: ShardedListAndWatch is off on this API server. " +
			"Nothing else was checked or measured.\n\n")
	}
	return honoured, nil
}

// echoDescription sums up the shardInfo.selector of a listing's pages.
func echoDescription(echoed []string) string {
	first := echoed[0]
	for _, e := range echoed[1:] {
		if e != first {
			return fmt.Sprintf("differs between pages: %q", echoed)
		}
	}
	if first == "" {
		return "absent"
	}
	return fmt.Sprintf("`%s`", first)
}

func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}

// checkHashedField shows what the server hashes: for a few namespaces, the
// range holding only fnv64a(namespace) must select exactly that
// namespace's objects; for one Application, the range holding only
// fnv64a(uid), keyed by object.metadata.uid, that Application alone.
func checkHashedField(ctx context.Context, c client.Client, r *report, namespaces int) error {
	apps := kinds[0]
	all, err := list(ctx, c, apps, "")
	if err != nil {
		return err
	}
	r.printf("## What the server hashes\n\n")
	r.printf("Each LIST selects the single hash value FNV-1a-64(field) that this command computes " +
		"(Go hash/fnv over the field's bytes); it must return exactly the objects with that field.\n\n")
	r.printf("| key | field value | FNV-1a 64 | Applications returned | expected | check |\n|---|---|---|---|---|---|\n")
	for _, i := range slices.Compact([]int{0, namespaces / 2, namespaces - 1}) {
		ns := namespaceName(i)
		h := fnv64a(ns)
		got, err := list(ctx, c, apps, selector(shardKey, exactRange(h)))
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for key, n := range all.namespaceOf {
			if n == ns {
				want[key] = true
			}
		}
		ok := sameKeys(got.namespaceOf, want)
		r.printf("| %s | `%s` | `%s` | %d | %d | %s |\n", shardKey, ns, hexBound(h), len(got.namespaceOf), len(want),
			r.check(ok, "the hash of namespace "+ns+" alone does not select exactly its Applications"))
	}
	keys := slices.Sorted(maps.Keys(all.uidOf))
	if len(keys) > 0 {
		uid := all.uidOf[keys[0]]
		h := fnv64a(uid)
		got, err := list(ctx, c, apps, selector("object.metadata.uid", exactRange(h)))
		if err != nil {
			return err
		}
		ok := sameKeys(got.namespaceOf, map[string]bool{keys[0]: true})
		r.printf("| object.metadata.uid | `%s` (%s) | `%s` | %d | 1 | %s |\n", uid, keys[0], hexBound(h),
			len(got.namespaceOf), r.check(ok, "the hash of one uid alone does not select exactly its Application"))
	}
	r.printf("\n")
	return nil
}

func sameKeys[V any](got map[string]V, want map[string]bool) bool {
	if len(got) != len(want) {
		return false
	}
	for k := range got {
		if !want[k] {
			return false
		}
	}
	return true
}

// checkShardedLists checks, for each shard count, that each shard's LIST
// returns exactly the objects whose namespace hashes into its range, that
// the shards are disjoint and that together they are everything. It
// returns how many objects of each kind shard 0 of each count holds.
func checkShardedLists(ctx context.Context, c client.Client, r *report, counts []int) (map[int]map[string]int, error) {
	shard0 := map[int]map[string]int{}
	r.printf("## Sharded LIST by %s\n\n", shardKey)
	r.printf("Every shard's LIST (pages of %d) against the unsharded LIST, filtered here by "+
		"FNV-1a-64(namespace) in the shard's range.\n\n", listPage)
	r.printf("| shards | kind | objects per shard | namespaces per shard | exact per shard | disjoint | union = all " +
		"| shardInfo | check |\n")
	r.printf("|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range counts {
		ranges := shardRanges(k)
		shard0[k] = map[string]int{}
		for _, kd := range kinds {
			all, err := list(ctx, c, kd, "")
			if err != nil {
				return nil, err
			}
			shard0[k][kd.name] = all.count(ranges[0])
			seen := map[string]int{} // key → how many shards returned it
			var perShard, nsPerShard []string
			exact, echoed := true, true
			absent, present := false, false
			for _, rg := range ranges {
				sel := selector(shardKey, rg)
				got, err := list(ctx, c, kd, sel)
				if err != nil {
					return nil, fmt.Errorf("LIST %s with %q: %w", kd.name, sel, err)
				}
				want := map[string]bool{}
				for key, ns := range all.namespaceOf {
					if rg.contains(fnv64a(ns)) {
						want[key] = true
					}
				}
				exact = exact && sameKeys(got.namespaceOf, want)
				for _, e := range got.echoed {
					// Absent is reported, not failed: see echoes.
					echoed = echoed && (e == sel || e == "")
					if e == "" {
						absent = true
					} else {
						present = true
					}
				}
				nss := map[string]bool{}
				for key, ns := range got.namespaceOf {
					seen[key]++
					nss[ns] = true
				}
				perShard = append(perShard, fmt.Sprint(len(got.namespaceOf)))
				nsPerShard = append(nsPerShard, fmt.Sprint(len(nss)))
			}
			disjoint := true
			for _, n := range seen {
				disjoint = disjoint && n == 1
			}
			union := len(seen) == len(all.namespaceOf)
			for key := range all.namespaceOf {
				union = union && seen[key] > 0
			}
			r.printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", k, kd.name,
				strings.Join(perShard, " / "), strings.Join(nsPerShard, " / "), yes(exact), yes(disjoint), yes(union),
				echoes(echoed, absent, present),
				r.check(exact && disjoint && union && echoed, fmt.Sprintf("%d shards of %s", k, kd.name)))
		}
	}
	// Ranges OR-ed together: shards 0 and 2 of 4 in one selector.
	r4 := shardRanges(4)
	apps := kinds[0]
	all, err := list(ctx, c, apps, "")
	if err != nil {
		return nil, err
	}
	sel := selector(shardKey, r4[0], r4[2])
	got, err := list(ctx, c, apps, sel)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for key, ns := range all.namespaceOf {
		if s := shardOf(fnv64a(ns), 4); s == 0 || s == 2 {
			want[key] = true
		}
	}
	r.printf("\nTwo ranges OR-ed (`%s`): %d Applications returned, %d expected (shards 0 and 2 of 4): %s.\n\n",
		sel, len(got.namespaceOf), len(want),
		r.check(sameKeys(got.namespaceOf, want), "shards 0 || 2 of 4 do not select their two ranges"))
	return shard0, nil
}

// echoes sums up the shardInfo of every page of every shard: the
// selector sent, or absent (which the API server does for custom
// resources: unstructured lists have no shardInfo to set).
func echoes(matching, absent, present bool) string {
	switch {
	case !matching:
		return "**a different selector**"
	case absent && present:
		return "on some pages"
	case absent:
		return "absent"
	}
	return "the selector sent"
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// watchDeadline bounds every wait for a watch event.
const watchDeadline = 30 * time.Second

// checkShardedWatch opens a watch of the Applications for each of 2 shards
// and creates, in this order, x1 in a namespace of shard 0, y1 in one of
// shard 1, x2 in shard 0, y2 in shard 1. A watch delivers its events in
// resourceVersion order, so once shard 0's watch has delivered x2 it will
// never deliver y1 (written before x2); likewise for shard 1 and x2 once
// y2 arrived. Each watch must deliver exactly its own two, in order —
// which also proves each one is live.
func checkShardedWatch(ctx context.Context, c client.WithWatch, r *report, namespaces int) error {
	ranges := shardRanges(2)
	nsOf := [2]string{}
	for i := range namespaces {
		ns := namespaceName(i)
		if s := shardOf(fnv64a(ns), 2); nsOf[s] == "" {
			nsOf[s] = ns
		}
	}
	if nsOf[0] == "" || nsOf[1] == "" {
		return fmt.Errorf("no namespace in each of 2 shards among %d: run with more namespaces", namespaces)
	}
	probes := []struct {
		shard int
		name  string
	}{{0, "watch-x1"}, {1, "watch-y1"}, {0, "watch-x2"}, {1, "watch-y2"}}
	for _, p := range probes { // from an earlier run
		app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: nsOf[p.shard], Name: p.name}}
		if err := c.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	head := &sunappsv1.ApplicationList{}
	if err := c.List(ctx, head, client.Limit(1)); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, watchDeadline)
	defer cancel()
	var watches [2]watch.Interface
	for s := range 2 {
		w, err := c.Watch(wctx, &sunappsv1.ApplicationList{}, &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: head.ResourceVersion, ShardSelector: selector(shardKey, ranges[s])}})
		if err != nil {
			return fmt.Errorf("WATCH with shard %d of 2: %w", s, err)
		}
		defer w.Stop()
		watches[s] = w
	}
	for _, p := range probes {
		if err := c.Create(ctx, newApplication(nsOf[p.shard], p.name)); err != nil {
			return err
		}
	}
	r.printf("## Sharded WATCH\n\n")
	r.printf("Two watches of the Applications from resourceVersion %s, one per shard of 2; then, in this order, "+
		"x1 created in %s (shard 0), y1 in %s (shard 1), x2 in %s, y2 in %s. Watch events come in resourceVersion "+
		"order, so a watch that delivered the last object of its own shard has already delivered anything of the "+
		"other shard written before it. Deadline %s.\n\n",
		head.ResourceVersion, nsOf[0], nsOf[1], nsOf[0], nsOf[1], watchDeadline)
	r.printf("| watch | events until its last object | expected | check |\n|---|---|---|---|\n")
	for s := range 2 {
		want := []string{}
		for _, p := range probes {
			if p.shard == s {
				want = append(want, p.name)
			}
		}
		got, err := eventsUntil(watches[s], want[len(want)-1])
		cell := strings.Join(got, ", ")
		if err != nil {
			cell += " (" + err.Error() + ")"
		}
		r.printf("| shard %d of 2 | %s | ADDED %s | %s |\n", s, cell, strings.Join(want, ", ADDED "),
			r.check(err == nil && slices.Equal(got, prefixed("ADDED ", want)),
				fmt.Sprintf("the watch of shard %d of 2 did not deliver exactly its own objects", s)))
	}
	r.printf("\n")
	for _, p := range probes {
		app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: nsOf[p.shard], Name: p.name}}
		if err := c.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// eventsUntil reads w until it delivers an event for the Application
// named last, and returns "TYPE name" of every event on the way (bookmarks
// left out). It fails when the watch ends first (its deadline included).
func eventsUntil(w watch.Interface, last string) ([]string, error) {
	var got []string
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Bookmark:
			continue
		case watch.Error:
			return got, fmt.Errorf("watch error: %v", apierrors.FromObject(ev.Object))
		}
		obj, ok := ev.Object.(client.Object)
		if !ok {
			continue
		}
		got = append(got, string(ev.Type)+" "+obj.GetName())
		if obj.GetName() == last {
			return got, nil
		}
	}
	return got, fmt.Errorf("the watch ended (deadline %s) before %s came", watchDeadline, last)
}

func prefixed(p string, s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = p + v
	}
	return out
}
