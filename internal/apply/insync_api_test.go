package apply_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
)

// TestDriftedAgreesWithAPIServer checks the operator's write decision
// (SyncedChildren.Drifted on the child as its cache holds it) against the API
// server's own answer, over generated Deployments and Services that another
// field manager then changes by Update (removed fields and list entries,
// changed values, additions).
//
// The ground truth is the operator's restore done for real: the takeover of
// other managers' fields (apply.ReclaimPatch) and a force apply of desired
// as apply.FieldOwner. (A dry run cannot stand in for it: a dry-run
// takeover patch does not persist, so a dry-run apply after it would not
// remove the fields taken over.) The object before and after the restore
// is compared, managedFields, resourceVersion and generation aside.
// Failures:
//   - missed drift: Drifted says no, the restore changed the object;
//   - needless write: Drifted says yes without foreign fields, the restore
//     changed nothing (the operator would write at every reconcile);
//   - no steady state: Drifted still says yes after the restore.
//
// A restore that only takes fields over (Drifted yes because another
// manager owns fields, with the operator's values) is counted, not failed:
// it is one write, needed so that a later apply can remove those fields.
//
// APPLY_FUZZ_SEED, APPLY_FUZZ_CASES and APPLY_FUZZ_CASE (run that case
// only) reproduce a failure.
func TestDriftedAgreesWithAPIServer(t *testing.T) {
	seed := envUint(t, "APPLY_FUZZ_SEED", 20260701)
	cases := int(envUint(t, "APPLY_FUZZ_CASES", 400))
	only := -1
	if os.Getenv("APPLY_FUZZ_CASE") != "" {
		only = int(envUint(t, "APPLY_FUZZ_CASE", 0))
	}

	c := ownAPIServer(t)
	ctx := t.Context()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespace}}); err != nil {
		t.Fatal(err)
	}

	h := &fuzzHarness{c: c, seed: seed}
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range work {
				if err := h.run(ctx, i); err != nil {
					t.Errorf("seed %d case %d: %v", seed, i, err)
				}
			}
		})
	}
	for i := range cases {
		if only < 0 || i == only {
			work <- i
		}
	}
	close(work)
	wg.Wait()
	t.Logf("seed %d: %d cases in %s: %d mutations refused by validation, %d drifted (%d with foreign fields, "+
		"%d of them ownership only), %d in sync; %d missed drifts, %d needless writes, %d not steady after the restore; "+
		"%d restores refused, their node port still held; %d decisions after the mutation answered by SyncedChildren",
		seed, h.ran.Load(), time.Since(start).Round(time.Millisecond), h.refused.Load(), h.drifted.Load(),
		h.foreign.Load(), h.ownershipOnly.Load(), h.inSync.Load(), h.missed.Load(), h.needless.Load(), h.unsteady.Load(),
		h.portHeld.Load(), h.remembered.Load())
	if only < 0 {
		checkOutcomes(t, cases, int(h.ran.Load()), int(h.refused.Load()))
		// The memory must have answered, or it is not judged.
		if h.remembered.Load() == 0 {
			t.Errorf("SyncedChildren answered no decision after a mutation: its answers are not judged")
		}
	}
}

// checkOutcomes fails t unless a run of cases judged at least
// minAcceptedShare of them (their mutations accepted by the API server)
// and saw at least one mutation refused: a run whose cases are all refused
// (a generator that makes only invalid objects) judges nothing, and one
// that never sees a refusal does not exercise the validity boundary.
// Refusals are rare (1 in 400 cases with the default seed): another seed
// may see none, and then needs more cases.
func checkOutcomes(t *testing.T, cases, accepted, refused int) {
	t.Helper()
	if minAccepted := cases * minAcceptedShare / 100; accepted < minAccepted {
		t.Errorf("%d of %d cases judged, want at least %d (%d%%): %d refused by the API server",
			accepted, cases, minAccepted, minAcceptedShare, refused)
	}
	if refused == 0 {
		t.Errorf("no mutation of %d cases refused by the API server: the refusal path is not exercised", cases)
	}
}

// minAcceptedShare is the share, in percent, of the cases that must be
// judged (399 of 400 with the default seed).
const minAcceptedShare = 90

const (
	// restoreTimeout bounds a restore's tries and each try's requests (up
	// to four round trips to envtest's API server). It is room for a
	// loaded machine (two shared cores in CI, a 10 s bound ran out there),
	// not a performance claim.
	restoreTimeout = 30 * time.Second
	fuzzNamespace  = "insync-fuzz"
	intruder       = "intruder"
	// leftAlone starts the description of a change the operator leaves
	// alone (other tools' labels, annotations, finalizers, owners).
	leftAlone = "other tool's: "
)

func envUint(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

type fuzzHarness struct {
	c    client.Client
	seed uint64
	// nodePorts hands out explicit node ports no other case uses.
	nodePorts atomic.Int32
	// portHeld counts the cases whose restore the API server refused
	// because the node port the mutation released was still allocated
	// after restoreTimeout (judge).
	portHeld atomic.Int32

	ran, refused, drifted, foreign, ownershipOnly, inSync atomic.Int32
	missed, needless, unsteady                            atomic.Int32
	// remembered counts the cases whose decision after the mutation
	// SyncedChildren answered without InSync.
	remembered atomic.Int32
}

// child is one generated child: how to build it again (desired is consumed
// by the writes) and the mutations that fit its kind.
type child struct {
	desired   func() client.Object
	empty     func() client.Object
	mutations []mutation
	// applies are other managers' apply configurations for the child.
	applies []foreignApply
}

// foreignApply returns what it does and the partial object another
// manager applies (name and namespace are set by the caller).
type foreignApply func(r *rand.Rand) (string, *unstructured.Unstructured)

func partial(apiVersion, kind string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// mutation changes obj as another tool would; it returns what it did, or
// "" when it does not apply to obj.
type mutation func(r *rand.Rand, obj client.Object) string

func (h *fuzzHarness) run(ctx context.Context, i int) error {
	r := rand.New(rand.NewPCG(h.seed, uint64(i)))
	name := fmt.Sprintf("case-%d", i)
	var ch child
	switch r.IntN(5) {
	case 0, 1:
		ch = h.deploymentChild(r, name)
	case 2, 3:
		ch = h.serviceChild(r, name)
	default:
		ch = configMapChild(r, name)
	}
	key := client.ObjectKey{Namespace: fuzzNamespace, Name: name}
	defer func() {
		// Frees the Service's cluster IP and node ports for the next cases.
		_ = h.c.Delete(context.WithoutCancel(ctx), named(ch, key))
	}()

	// The operator's memory of the children found in sync, as one
	// controller's: decisions it answers are judged like the others.
	synced := &apply.SyncedChildren{}
	created, err := h.create(ctx, ch, key, synced)
	if err != nil {
		return err
	}
	done, err := h.mutate(ctx, r, ch, key, created)
	if err != nil || done == nil {
		return err
	}
	h.ran.Add(1)
	return h.judge(ctx, ch, key, done, synced)
}

func named(ch child, key client.ObjectKey) client.Object {
	obj := ch.empty()
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	return obj
}

// create makes the child as the operator does, and checks the operator
// sees no drift in what it just wrote.
func (h *fuzzHarness) create(ctx context.Context, ch child, key client.ObjectKey, synced *apply.SyncedChildren) (client.Object, error) {
	applier := &apply.Applier{Client: h.c, APIReader: h.c}
	if out, err := applier.Write(ctx, ch.desired(), nil); err != nil || out.Rejected != nil {
		return nil, fmt.Errorf("creating %s: %v %v\n%s", key.Name, err, out.Rejected, dump(ch.desired()))
	}
	created := ch.empty()
	if err := h.c.Get(ctx, key, created); err != nil {
		return nil, err
	}
	if drifted, _, err := decide(synced, ch.desired(), created); err != nil || drifted {
		return nil, fmt.Errorf("drifted right after the operator's own apply (err %v)\ndesired:\n%s\nlive:\n%s",
			err, dump(ch.desired()), dump(created))
	}
	return created, nil
}

// mutate changes the child as other managers do and says what they did
// (nil when the API server refused the change: the case is skipped).
func (h *fuzzHarness) mutate(ctx context.Context, r *rand.Rand, ch child, key client.ObjectKey, created client.Object) ([]string, error) {
	done := []string{}
	refused := func(err error) ([]string, error) {
		if apierrors.IsInvalid(err) {
			h.refused.Add(1)
			return nil, nil
		}
		return nil, fmt.Errorf("mutation %q: %w", done, err)
	}
	// Zero to three changes by another manager, in one Update.
	mutated := created.DeepCopyObject().(client.Object)
	for range r.IntN(4) {
		m := ch.mutations[r.IntN(len(ch.mutations))]
		if d := m(r, mutated); d != "" {
			done = append(done, d)
		}
	}
	if len(done) > 0 {
		if err := h.c.Update(ctx, mutated, client.FieldOwner(intruder)); err != nil {
			return refused(err)
		}
	}
	// Sometimes another manager's server-side apply too (kubectl apply
	// --server-side --force-conflicts of a few fields).
	if chance(r, 0.25) && len(ch.applies) > 0 {
		d, cfg := ch.applies[r.IntN(len(ch.applies))](r)
		done = append(done, d)
		cfg.SetNamespace(key.Namespace)
		cfg.SetName(key.Name)
		err := h.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(cfg), client.FieldOwner(intruder+"-apply"), client.ForceOwnership)
		if err != nil {
			return refused(err)
		}
	}
	// Sometimes a Deployment is scaled through its scale subresource
	// (kubectl scale, an HPA).
	if _, ok := ch.empty().(*appsv1.Deployment); ok && chance(r, 0.15) {
		n := int32(r.IntN(6))
		done = append(done, fmt.Sprintf("scale to %d", n))
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: n}}
		err := h.c.SubResource("scale").Update(ctx, named(ch, key), client.WithSubResourceBody(scale), client.FieldOwner(intruder+"-scale"))
		if err != nil {
			return refused(err)
		}
	}
	return done, nil
}

// judge compares the operator's decision on the changed child with what
// its restore does to it.
func (h *fuzzHarness) judge(ctx context.Context, ch child, key client.ObjectKey, done []string, synced *apply.SyncedChildren) error {
	before := ch.empty()
	if err := h.c.Get(ctx, key, before); err != nil {
		return err
	}
	answered := apply.SyncedAnswered(synced)
	drifted, foreign, err := decide(synced, ch.desired(), before)
	if err != nil {
		return err
	}
	if apply.SyncedAnswered(synced) > answered {
		h.remembered.Add(1)
	}
	// A node port another manager's Update released is sometimes not yet
	// free for the restore's apply (seen once in four runs, with four
	// workers): the restore is tried again until the API server frees it.
	// Each try has its own deadline, not what is left of the poll's.
	var after client.Object
	var restoreErr error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, restoreTimeout, true, func(context.Context) (bool, error) {
		tryCtx, cancel := context.WithTimeout(ctx, restoreTimeout)
		defer cancel()
		after, restoreErr = h.restore(tryCtx, ch, key)
		return !portAllocated(restoreErr), nil
	})
	if portAllocated(restoreErr) {
		// Still held after restoreTimeout: kube-apiserver leaked the port
		// the mutation's Update released, and only its node port repair
		// loop (every few minutes) frees it. The API server refuses the
		// restore itself; the case is not judged, and counted.
		h.ran.Add(-1)
		h.portHeld.Add(1)
		return nil
	}
	err = cmp.Or(restoreErr, err)
	if err != nil {
		return fmt.Errorf("mutation %q: restoring: %w", done, err)
	}
	diff := diffObjects(before, after)
	driftedAfter, _, err := decide(synced, ch.desired(), after)
	if err != nil {
		return err
	}

	report := func(what string) error {
		return fmt.Errorf("%s: %s after mutation %q (Drifted %v, foreign %v)\nrestore changed:\n  %s\n"+
			"desired:\n%s\nlive before the restore:\n%s",
			what, key.Name, done, drifted, foreign, strings.Join(diff, "\n  "), dump(ch.desired()), dump(before))
	}
	switch {
	case drifted:
		h.drifted.Add(1)
		if foreign {
			h.foreign.Add(1)
		}
	default:
		h.inSync.Add(1)
	}
	onlyLeftAlone := !slices.ContainsFunc(done, func(d string) bool { return !strings.HasPrefix(d, leftAlone) })
	switch {
	case !drifted && len(diff) > 0:
		h.missed.Add(1)
		return report("missed drift")
	case drifted && !foreign && len(diff) == 0:
		h.needless.Add(1)
		return report("needless write")
	case drifted && len(diff) == 0 && onlyLeftAlone:
		// What the operator leaves alone is no reason to write either.
		h.needless.Add(1)
		return report("needless takeover")
	case drifted && len(diff) == 0:
		h.ownershipOnly.Add(1)
	}
	if driftedAfter {
		h.unsteady.Add(1)
		return fmt.Errorf("not steady: %s still drifted after the restore, mutation %q\ndesired:\n%s\nlive after the restore:\n%s",
			key.Name, done, dump(ch.desired()), dump(after))
	}
	return nil
}

// decide is the operator's decision on live as its cache holds it
// (managedFields trimmed by apply.ManagedFieldsTransform), with synced, the
// memory of the children it found in sync.
func decide(synced *apply.SyncedChildren, desired, live client.Object) (drifted, foreign bool, err error) {
	if err := apply.SetHash(desired); err != nil {
		return false, false, err
	}
	cached, err := apply.ManagedFieldsTransform()(live.DeepCopyObject())
	if err != nil {
		return false, false, err
	}
	return synced.Drifted(desired, cached.(client.Object))
}

// restore takes over other managers' fields and force-applies desired, as
// the operator does when it decides to write, and returns the result.
func (h *fuzzHarness) restore(ctx context.Context, ch child, key client.ObjectKey) (client.Object, error) {
	desired := ch.desired()
	full := &unstructured.Unstructured{}
	full.SetGroupVersionKind(desired.GetObjectKind().GroupVersionKind())
	if err := h.c.Get(ctx, key, full); err != nil {
		return nil, err
	}
	patch, err := apply.ReclaimPatch(full)
	if err != nil {
		return nil, err
	}
	if patch != nil {
		if err := h.c.Patch(ctx, full, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(apply.FieldOwner)); err != nil {
			return nil, fmt.Errorf("reclaim patch: %w", err)
		}
	}
	if err := apply.SetHash(desired); err != nil {
		return nil, err
	}
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return nil, err
	}
	delete(body, "status")
	pruneNulls(body)
	cfg := &unstructured.Unstructured{Object: body}
	if err := h.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(cfg), client.FieldOwner(apply.FieldOwner), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	after := ch.empty()
	return after, h.c.Get(ctx, key, after)
}

func pruneNulls(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			pruneNulls(t)
		case []any:
			for _, e := range t {
				if em, ok := e.(map[string]any); ok {
					pruneNulls(em)
				}
			}
		}
	}
}

// diffObjects lists the paths where a and b differ, managedFields,
// resourceVersion and generation aside.
func diffObjects(a, b client.Object) []string {
	ua, errA := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	ub, errB := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if errA != nil || errB != nil {
		return []string{fmt.Sprintf("converting: %v %v", errA, errB)}
	}
	for _, u := range []map[string]any{ua, ub} {
		if md, ok := u["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
			delete(md, "resourceVersion")
			delete(md, "generation")
		}
	}
	var out []string
	diffValues("", ua, ub, &out)
	return out
}

func diffValues(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := slices.Sorted(maps.Keys(am))
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			diffValues(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diffValues(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("%s: %s -> %s", path, compact(a), compact(b)))
	}
}

func compact(v any) string {
	if v == nil {
		return "<none>"
	}
	return fmt.Sprintf("%v", v)
}

func dump(obj client.Object) string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err.Error()
	}
	if md, ok := u["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	delete(u, "status")
	var lines []string
	flatten("", u, &lines)
	slices.Sort(lines)
	return "  " + strings.Join(lines, "\n  ")
}

func flatten(path string, v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			flatten(path+"."+k, e, out)
		}
	case []any:
		for i, e := range t {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	case nil:
	default:
		*out = append(*out, fmt.Sprintf("%s = %v", path, t))
	}
}

// Generators. Values are drawn from small pools, so that mutations often
// hit a value desired already has, and label values are sometimes empty.

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

func genLabels(r *rand.Rand, minN, maxN int, prefix string) map[string]string {
	n := minN + r.IntN(maxN-minN+1)
	if n == 0 {
		return nil
	}
	labels := map[string]string{}
	for range n {
		labels[prefix+pick(r, "app", "tier", "team", "example.com/role", "track")] = pick(r, "web", "db", "", "blue", "v1")
	}
	return labels
}

func childMeta(r *rand.Rand, name string) metav1.ObjectMeta {
	labels := genLabels(r, 0, 3, "")
	if labels == nil {
		labels = map[string]string{}
	}
	labels[apply.ManagedByLabel] = apply.ManagedByValue
	labels["apps.sunstrider.cn/application"] = name
	meta := metav1.ObjectMeta{
		Name:      name,
		Namespace: fuzzNamespace,
		Labels:    labels,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps.sunstrider.cn/v1", Kind: "Application", Name: name,
			UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", r.IntN(1_000_000))), Controller: new(true), BlockOwnerDeletion: new(true),
		}},
	}
	if chance(r, 0.2) {
		meta.Annotations = map[string]string{"example.com/note": pick(r, "", "x")}
	}
	return meta
}

var (
	cpus     = []string{"100m", "0.25", "1", "1500m"}
	memories = []string{"64Mi", "128Mi", "500M", "1Gi", "1024Mi"}
)

func genResources(r *rand.Rand) corev1.ResourceRequirements {
	var res corev1.ResourceRequirements
	if chance(r, 0.5) {
		return res
	}
	c, m := r.IntN(len(cpus)), r.IntN(len(memories))
	res.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus[c])}
	if chance(r, 0.5) {
		res.Requests[corev1.ResourceMemory] = resource.MustParse(memories[m])
	}
	if chance(r, 0.5) {
		lc := c + r.IntN(len(cpus)-c)
		res.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus[lc])}
	}
	return res
}

func genContainer(r *rand.Rand, i int) corev1.Container {
	c := corev1.Container{
		Name:  fmt.Sprintf("c%d", i),
		Image: pick(r, "nginx:1.27", "busybox:1.36", "busybox", "example.com/app:v2"),
	}
	if chance(r, 0.3) {
		c.ImagePullPolicy = pick(r, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)
	}
	if chance(r, 0.3) {
		c.Command = []string{"sh", "-c", pick(r, "sleep 3600", "exec httpd")}
	}
	if chance(r, 0.2) {
		c.Args = []string{pick(r, "--v=2", "--port=8080")}
	}
	for j := range r.IntN(5) {
		e := corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", j), Value: pick(r, "a", "b", "")}
		if chance(r, 0.2) {
			e = corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}
		}
		c.Env = append(c.Env, e)
	}
	for j := range r.IntN(4) {
		p := corev1.ContainerPort{ContainerPort: int32(8080 + j)}
		if chance(r, 0.5) {
			p.Name = fmt.Sprintf("port-%d", j)
		}
		if chance(r, 0.3) {
			p.Protocol = pick(r, corev1.ProtocolTCP, corev1.ProtocolUDP)
		}
		c.Ports = append(c.Ports, p)
	}
	c.Resources = genResources(r)
	if chance(r, 0.2) {
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/healthz", Port: intstr.FromInt32(8080)}}}
		if chance(r, 0.5) {
			c.ReadinessProbe.PeriodSeconds = int32(5 + r.IntN(3)*5)
		}
	}
	return c
}

func genToleration(r *rand.Rand, i int) corev1.Toleration {
	t := corev1.Toleration{Key: fmt.Sprintf("example.com/k%d", i), Effect: pick(r, corev1.TaintEffect(""),
		corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)}
	if chance(r, 0.5) {
		t.Operator = corev1.TolerationOpExists
	} else {
		t.Operator = pick(r, corev1.TolerationOpEqual, "")
		t.Value = pick(r, "a", "b")
	}
	if t.Effect == corev1.TaintEffectNoExecute && chance(r, 0.5) {
		t.TolerationSeconds = new(int64(60 * (1 + r.IntN(3))))
	}
	return t
}

func (h *fuzzHarness) deploymentChild(r *rand.Rand, name string) child {
	g := rand.New(rand.NewPCG(r.Uint64(), 0))
	meta := childMeta(g, name)
	selector := genLabels(g, 1, 2, "sel-")
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: genLabels(g, 0, 2, "")}}
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	maps.Copy(template.Labels, selector)
	if chance(g, 0.2) {
		template.Annotations = map[string]string{"example.com/config": pick(g, "a", "")}
	}
	for i := range 1 + g.IntN(3) {
		template.Spec.Containers = append(template.Spec.Containers, genContainer(g, i))
	}
	for i := range g.IntN(4) {
		template.Spec.Tolerations = append(template.Spec.Tolerations, genToleration(g, i))
	}
	if chance(g, 0.2) {
		template.Spec.NodeSelector = genLabels(g, 1, 2, "node-")
	}
	if chance(g, 0.2) {
		template.Spec.TerminationGracePeriodSeconds = new(int64(g.IntN(60)))
	}
	spec := appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}, Template: template}
	if chance(g, 0.8) {
		spec.Replicas = new(int32(g.IntN(6)))
	}
	switch g.IntN(3) {
	case 0:
		spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	case 1:
		spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{
			MaxSurge: new(pick(g, intstr.FromInt32(1), intstr.FromString("50%")))}
	}
	if chance(g, 0.2) {
		spec.MinReadySeconds = int32(g.IntN(10))
	}
	if chance(g, 0.2) {
		spec.RevisionHistoryLimit = new(int32(g.IntN(10)))
	}
	if chance(g, 0.2) {
		spec.ProgressDeadlineSeconds = new(int32(60 + g.IntN(600)))
	}
	spec.Paused = chance(g, 0.1)
	desired := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta,
		Spec:       spec,
	}
	return child{
		desired:   func() client.Object { return desired.DeepCopy() },
		empty:     func() client.Object { return &appsv1.Deployment{} },
		mutations: append(metadataMutations(), deploymentMutations()...),
		applies:   deploymentApplies(desired),
	}
}

func deploymentApplies(desired *appsv1.Deployment) []foreignApply {
	first := desired.Spec.Template.Spec.Containers[0]
	return []foreignApply{
		func(r *rand.Rand) (string, *unstructured.Unstructured) {
			n := int64(r.IntN(6))
			return fmt.Sprintf("apply replicas %d", n),
				partial("apps/v1", "Deployment", map[string]any{"spec": map[string]any{"replicas": n}})
		},
		func(r *rand.Rand) (string, *unstructured.Unstructured) {
			image := pick(r, first.Image, "nginx:1.28")
			return "apply image " + image, partial("apps/v1", "Deployment", map[string]any{"spec": map[string]any{
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": first.Name, "image": image}}}}}})
		},
		func(r *rand.Rand) (string, *unstructured.Unstructured) {
			return "apply a toleration", partial("apps/v1", "Deployment", map[string]any{"spec": map[string]any{
				"template": map[string]any{"spec": map[string]any{"tolerations": []any{
					map[string]any{"key": "intruder.example/t", "operator": "Exists"}}}}}})
		},
		func(r *rand.Rand) (string, *unstructured.Unstructured) {
			return leftAlone + "apply a label", partial("apps/v1", "Deployment", map[string]any{"metadata": map[string]any{
				"labels": map[string]any{"intruder.example/applied": "x"}}})
		},
	}
}

func configMapChild(r *rand.Rand, name string) child {
	g := rand.New(rand.NewPCG(r.Uint64(), 2))
	desired := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: childMeta(g, name),
		Data:       map[string]string{"name": pick(g, "tea", ""), "drink": pick(g, "", "coffee", "water")},
	}
	if chance(g, 0.3) {
		desired.Data["extra"] = pick(g, "", "x")
	}
	return child{
		desired: func() client.Object { return desired.DeepCopy() },
		empty:   func() client.Object { return &corev1.ConfigMap{} },
		mutations: append(metadataMutations(),
			func(r *rand.Rand, obj client.Object) string {
				cm := obj.(*corev1.ConfigMap)
				k, ok := someKey(r, cm.Data, nil)
				if !ok {
					return ""
				}
				delete(cm.Data, k)
				return "remove data key " + k
			},
			func(r *rand.Rand, obj client.Object) string {
				cm := obj.(*corev1.ConfigMap)
				k, ok := someKey(r, cm.Data, nil)
				if !ok {
					return ""
				}
				cm.Data[k] = pick(r, "", "changed", "tea")
				return fmt.Sprintf("data %s=%q", k, cm.Data[k])
			},
			func(r *rand.Rand, obj client.Object) string {
				cm := obj.(*corev1.ConfigMap)
				cm.Data = with(cm.Data, "added", pick(r, "", "x"))
				return "add data key"
			},
			func(r *rand.Rand, obj client.Object) string {
				cm := obj.(*corev1.ConfigMap)
				cm.BinaryData = map[string][]byte{"blob": []byte("x")}
				return "add binaryData"
			},
		),
		applies: []foreignApply{func(r *rand.Rand) (string, *unstructured.Unstructured) {
			v := pick(r, "", "juice")
			return fmt.Sprintf("apply data drink=%q", v), partial("v1", "ConfigMap", map[string]any{"data": map[string]any{"drink": v}})
		}},
	}
}

func (h *fuzzHarness) serviceChild(r *rand.Rand, name string) child {
	g := rand.New(rand.NewPCG(r.Uint64(), 1))
	spec := corev1.ServiceSpec{
		Type:     pick(g, corev1.ServiceTypeClusterIP, corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, ""),
		Selector: genLabels(g, 0, 3, ""),
	}
	n := 1 + g.IntN(3)
	for i := range n {
		p := corev1.ServicePort{Port: int32(80 + i)}
		if n > 1 || chance(g, 0.3) {
			p.Name = fmt.Sprintf("p%d", i)
		}
		if chance(g, 0.3) {
			p.Protocol = pick(g, corev1.ProtocolTCP, corev1.ProtocolUDP)
		}
		p.TargetPort = pick(g, intstr.FromInt32(p.Port), intstr.FromInt32(8080+int32(i)), intstr.FromString("http"))
		if nodePorts(spec.Type) && chance(g, 0.3) {
			p.NodePort = h.nodePort()
		}
		spec.Ports = append(spec.Ports, p)
	}
	if chance(g, 0.2) {
		spec.SessionAffinity = corev1.ServiceAffinityClientIP
	}
	spec.PublishNotReadyAddresses = chance(g, 0.1)
	if nodePorts(spec.Type) && chance(g, 0.3) {
		spec.ExternalTrafficPolicy = pick(g, corev1.ServiceExternalTrafficPolicyLocal, corev1.ServiceExternalTrafficPolicyCluster)
	}
	if chance(g, 0.2) {
		spec.InternalTrafficPolicy = new(pick(g, corev1.ServiceInternalTrafficPolicyLocal, corev1.ServiceInternalTrafficPolicyCluster))
	}
	desired := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: childMeta(g, name),
		Spec:       spec,
	}
	return child{
		desired:   func() client.Object { return desired.DeepCopy() },
		empty:     func() client.Object { return &corev1.Service{} },
		mutations: append(metadataMutations(), h.serviceMutations()...),
		applies: []foreignApply{
			func(r *rand.Rand) (string, *unstructured.Unstructured) {
				return "apply a selector", partial("v1", "Service", map[string]any{"spec": map[string]any{
					"selector": map[string]any{"intruder.example/sel": "x"}}})
			},
			func(r *rand.Rand) (string, *unstructured.Unstructured) {
				p := spec.Ports[0]
				target := pick(r, p.TargetPort.String(), "9999")
				var tp any = target
				if n, err := strconv.Atoi(target); err == nil {
					tp = int64(n)
				}
				port := map[string]any{"port": int64(p.Port), "targetPort": tp}
				if p.Protocol != "" {
					port["protocol"] = string(p.Protocol)
				}
				return "apply targetPort " + target, partial("v1", "Service", map[string]any{"spec": map[string]any{
					"ports": []any{port}}})
			},
		},
	}
}

func nodePorts(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer
}

// nodePort returns a node port no other case asked for (each case's
// Service is deleted at its end, so the range is never exhausted).
func (h *fuzzHarness) nodePort() int32 {
	return 30000 + h.nodePorts.Add(1)%2700
}

// Mutations. Each returns "" when it does not apply.

func someKey(r *rand.Rand, m map[string]string, skip func(string) bool) (string, bool) {
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if skip == nil || !skip(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	return pick(r, keys...), true
}

func metadataMutations() []mutation {
	return []mutation{
		func(r *rand.Rand, obj client.Object) string {
			obj.SetLabels(with(obj.GetLabels(), "intruder.example/added", pick(r, "x", "")))
			return leftAlone + "add a label of another tool"
		},
		func(r *rand.Rand, obj client.Object) string {
			k, ok := someKey(r, obj.GetLabels(), nil)
			if !ok {
				return ""
			}
			labels := obj.GetLabels()
			delete(labels, k)
			obj.SetLabels(labels)
			return "remove label " + k
		},
		func(r *rand.Rand, obj client.Object) string {
			k, ok := someKey(r, obj.GetLabels(), nil)
			if !ok {
				return ""
			}
			v := pick(r, "changed", "", "web")
			obj.SetLabels(with(obj.GetLabels(), k, v))
			return fmt.Sprintf("set label %s=%q", k, v)
		},
		func(r *rand.Rand, obj client.Object) string {
			obj.SetAnnotations(with(obj.GetAnnotations(), "intruder.example/note", "x"))
			return leftAlone + "add an annotation of another tool"
		},
		func(r *rand.Rand, obj client.Object) string {
			k, ok := someKey(r, obj.GetAnnotations(), nil)
			if !ok {
				return ""
			}
			a := obj.GetAnnotations()
			delete(a, k)
			obj.SetAnnotations(a)
			return "remove annotation " + k
		},
		func(r *rand.Rand, obj client.Object) string {
			k, ok := someKey(r, obj.GetAnnotations(), nil)
			if !ok {
				return ""
			}
			obj.SetAnnotations(with(obj.GetAnnotations(), k, "changed"))
			return "change annotation " + k
		},
		func(r *rand.Rand, obj client.Object) string {
			obj.SetOwnerReferences(nil)
			return "remove the owner references"
		},
		func(r *rand.Rand, obj client.Object) string {
			obj.SetOwnerReferences(append(obj.GetOwnerReferences(), metav1.OwnerReference{
				APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "11111111-1111-1111-1111-111111111111"}))
			return leftAlone + "add another owner reference"
		},
		func(r *rand.Rand, obj client.Object) string {
			refs := obj.GetOwnerReferences()
			if len(refs) == 0 {
				return ""
			}
			if chance(r, 0.5) {
				refs[0].BlockOwnerDeletion = nil
				return "unset blockOwnerDeletion"
			}
			refs[0].Controller = new(false)
			return "controller false"
		},
		func(r *rand.Rand, obj client.Object) string {
			obj.SetFinalizers(append(obj.GetFinalizers(), "intruder.example/hold"))
			return leftAlone + "add a finalizer"
		},
	}
}

func with(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func onDeployment(f func(r *rand.Rand, d *appsv1.Deployment) string) mutation {
	return func(r *rand.Rand, obj client.Object) string { return f(r, obj.(*appsv1.Deployment)) }
}

func onContainer(f func(r *rand.Rand, c *corev1.Container) string) mutation {
	return onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
		cs := d.Spec.Template.Spec.Containers
		i := r.IntN(len(cs))
		if s := f(r, &cs[i]); s != "" {
			return fmt.Sprintf("container %s: %s", cs[i].Name, s)
		}
		return ""
	})
}

func deploymentMutations() []mutation {
	return []mutation{
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			if chance(r, 0.3) {
				d.Spec.Replicas = nil
				return "unset replicas"
			}
			d.Spec.Replicas = new(int32(r.IntN(6)))
			return fmt.Sprintf("set replicas %d", *d.Spec.Replicas)
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			d.Spec.Template.Labels = with(d.Spec.Template.Labels, "intruder.example/pod", "x")
			return leftAlone + "add a Pod template label of another tool"
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			k, ok := someKey(r, d.Spec.Template.Labels, func(k string) bool { _, sel := d.Spec.Selector.MatchLabels[k]; return sel })
			if !ok {
				return ""
			}
			if chance(r, 0.5) {
				delete(d.Spec.Template.Labels, k)
				return "remove Pod template label " + k
			}
			d.Spec.Template.Labels[k] = pick(r, "changed", "", "web")
			return fmt.Sprintf("set Pod template label %s=%q", k, d.Spec.Template.Labels[k])
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			d.Spec.Template.Annotations = with(d.Spec.Template.Annotations, "kubectl.kubernetes.io/restartedAt", "2026-07-01T00:00:00Z")
			return leftAlone + "rollout restart"
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			k, ok := someKey(r, d.Spec.Template.Annotations, nil)
			if !ok {
				return ""
			}
			delete(d.Spec.Template.Annotations, k)
			return "remove Pod template annotation " + k
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			c.Image = pick(r, "nginx:1.27", "busybox:1.36", "busybox", "example.com/app:v3")
			return "image " + c.Image
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox:1.36"})
			return "add a sidecar"
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			cs := d.Spec.Template.Spec.Containers
			if len(cs) < 2 {
				return ""
			}
			i := r.IntN(len(cs))
			d.Spec.Template.Spec.Containers = slices.Delete(cs, i, i+1)
			return fmt.Sprintf("remove container %d", i)
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			cs := d.Spec.Template.Spec.Containers
			if len(cs) < 2 {
				return ""
			}
			cs[0], cs[1] = cs[1], cs[0]
			return "swap the first two containers"
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			c.Env = append(c.Env, corev1.EnvVar{Name: "ADDED", Value: pick(r, "x", "")})
			return "add env ADDED"
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			if len(c.Env) == 0 {
				return ""
			}
			i := r.IntN(len(c.Env))
			name := c.Env[i].Name
			c.Env = slices.Delete(c.Env, i, i+1)
			return "remove env " + name
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			if len(c.Env) == 0 {
				return ""
			}
			i := r.IntN(len(c.Env))
			c.Env[i].ValueFrom = nil
			c.Env[i].Value = pick(r, "a", "changed", "")
			return fmt.Sprintf("set env %s=%q", c.Env[i].Name, c.Env[i].Value)
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			if len(c.Env) < 2 {
				return ""
			}
			c.Env[0], c.Env[1] = c.Env[1], c.Env[0]
			return "swap the first two env vars"
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: 9090})
			return "add port 9090"
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			if len(c.Ports) == 0 {
				return ""
			}
			i := r.IntN(len(c.Ports))
			c.Ports = slices.Delete(c.Ports, i, i+1)
			return fmt.Sprintf("remove port %d", i)
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			if len(c.Ports) == 0 {
				return ""
			}
			i := r.IntN(len(c.Ports))
			c.Ports[i].ContainerPort = int32(9100 + r.IntN(3))
			return fmt.Sprintf("port %d: containerPort %d", i, c.Ports[i].ContainerPort)
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			c.Resources = genResources(r)
			return fmt.Sprintf("resources %v", c.Resources)
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			c.ImagePullPolicy = pick(r, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)
			return "imagePullPolicy " + string(c.ImagePullPolicy)
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			if chance(r, 0.5) {
				c.Command = nil
				return "remove command"
			}
			c.Command = []string{"sh", "-c", "sleep 3600"}
			return "command sleep"
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			c.TerminationMessagePath = pick(r, "/dev/termination-log", "/tmp/log")
			return "terminationMessagePath " + c.TerminationMessagePath
		}),
		onContainer(func(r *rand.Rand, c *corev1.Container) string {
			if c.ReadinessProbe == nil {
				return ""
			}
			if chance(r, 0.5) {
				c.ReadinessProbe = nil
				return "remove readiness probe"
			}
			c.ReadinessProbe.PeriodSeconds = int32(5 + r.IntN(3)*5)
			return fmt.Sprintf("readiness periodSeconds %d", c.ReadinessProbe.PeriodSeconds)
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			ps := &d.Spec.Template.Spec
			switch {
			case len(ps.Tolerations) > 0 && chance(r, 0.4):
				i := r.IntN(len(ps.Tolerations))
				ps.Tolerations = slices.Delete(ps.Tolerations, i, i+1)
				return fmt.Sprintf("remove toleration %d", i)
			case len(ps.Tolerations) > 0 && chance(r, 0.5):
				i := r.IntN(len(ps.Tolerations))
				ps.Tolerations[i] = genToleration(r, i)
				return fmt.Sprintf("toleration %d: %v", i, ps.Tolerations[i])
			}
			ps.Tolerations = append(ps.Tolerations, genToleration(r, 7))
			return "add a toleration"
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			ps := &d.Spec.Template.Spec
			if k, ok := someKey(r, ps.NodeSelector, nil); ok && chance(r, 0.5) {
				delete(ps.NodeSelector, k)
				return "remove nodeSelector " + k
			}
			ps.NodeSelector = with(ps.NodeSelector, "intruder.example/zone", pick(r, "a", ""))
			return "add a nodeSelector key"
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			ps := &d.Spec.Template.Spec
			switch r.IntN(4) {
			case 0:
				ps.TerminationGracePeriodSeconds = new(int64(r.IntN(2) * 30))
				return fmt.Sprintf("terminationGracePeriodSeconds %d", *ps.TerminationGracePeriodSeconds)
			case 1:
				ps.DNSPolicy = pick(r, corev1.DNSClusterFirst, corev1.DNSDefault)
				return "dnsPolicy " + string(ps.DNSPolicy)
			case 2:
				ps.SchedulerName = pick(r, "default-scheduler", "other-scheduler")
				return "schedulerName " + ps.SchedulerName
			default:
				ps.ServiceAccountName = "default"
				return "serviceAccountName default"
			}
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			switch r.IntN(4) {
			case 0:
				d.Spec.RevisionHistoryLimit = new(int32(r.IntN(2) * 10))
				return fmt.Sprintf("revisionHistoryLimit %d", *d.Spec.RevisionHistoryLimit)
			case 1:
				d.Spec.ProgressDeadlineSeconds = new(int32(600 + r.IntN(2)))
				return fmt.Sprintf("progressDeadlineSeconds %d", *d.Spec.ProgressDeadlineSeconds)
			case 2:
				d.Spec.MinReadySeconds = int32(r.IntN(2) * 5)
				return fmt.Sprintf("minReadySeconds %d", d.Spec.MinReadySeconds)
			default:
				d.Spec.Paused = !d.Spec.Paused
				return fmt.Sprintf("paused %v", d.Spec.Paused)
			}
		}),
		onDeployment(func(r *rand.Rand, d *appsv1.Deployment) string {
			if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
				d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
				return "strategy RollingUpdate"
			}
			if chance(r, 0.5) {
				d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
				return "strategy Recreate"
			}
			surge := pick(r, intstr.FromString("25%"), intstr.FromInt32(2))
			d.Spec.Strategy.RollingUpdate.MaxSurge = &surge
			return "maxSurge " + surge.String()
		}),
	}
}

func onService(f func(r *rand.Rand, s *corev1.Service) string) mutation {
	return func(r *rand.Rand, obj client.Object) string { return f(r, obj.(*corev1.Service)) }
}

func (h *fuzzHarness) serviceMutations() []mutation {
	return []mutation{
		onService(func(r *rand.Rand, s *corev1.Service) string {
			i := r.IntN(len(s.Spec.Ports))
			s.Spec.Ports[i].Port = int32(90 + r.IntN(3))
			return fmt.Sprintf("port %d: port %d", i, s.Spec.Ports[i].Port)
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			i := r.IntN(len(s.Spec.Ports))
			s.Spec.Ports[i].TargetPort = pick(r, intstr.FromInt32(8080), intstr.FromInt32(s.Spec.Ports[i].Port), intstr.FromString("web"))
			return fmt.Sprintf("port %d: targetPort %s", i, s.Spec.Ports[i].TargetPort.String())
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			for i := range s.Spec.Ports {
				if s.Spec.Ports[i].Name == "" {
					s.Spec.Ports[i].Name = fmt.Sprintf("named%d", i)
				}
			}
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "added", Port: 99, TargetPort: intstr.FromInt32(99)})
			return "add port 99"
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			if len(s.Spec.Ports) < 2 {
				return ""
			}
			i := r.IntN(len(s.Spec.Ports))
			s.Spec.Ports = slices.Delete(s.Spec.Ports, i, i+1)
			return fmt.Sprintf("remove port %d", i)
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			if !nodePorts(s.Spec.Type) {
				return ""
			}
			i := r.IntN(len(s.Spec.Ports))
			s.Spec.Ports[i].NodePort = h.nodePort()
			return fmt.Sprintf("port %d: nodePort %d", i, s.Spec.Ports[i].NodePort)
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			k, ok := someKey(r, s.Spec.Selector, nil)
			switch {
			case ok && chance(r, 0.4):
				delete(s.Spec.Selector, k)
				return "remove selector key " + k
			case ok && chance(r, 0.5):
				s.Spec.Selector[k] = pick(r, "changed", "", "web")
				return fmt.Sprintf("selector %s=%q", k, s.Spec.Selector[k])
			case chance(r, 0.2):
				s.Spec.Selector = nil
				return "remove the selector"
			}
			s.Spec.Selector = with(s.Spec.Selector, "intruder.example/sel", "x")
			return "add a selector key"
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			if nodePorts(s.Spec.Type) {
				s.Spec.Type = corev1.ServiceTypeClusterIP
				s.Spec.ExternalTrafficPolicy = ""
				s.Spec.AllocateLoadBalancerNodePorts = nil
				for i := range s.Spec.Ports {
					s.Spec.Ports[i].NodePort = 0
				}
				return "type ClusterIP"
			}
			s.Spec.Type = corev1.ServiceTypeNodePort
			return "type NodePort"
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
				s.Spec.SessionAffinity = corev1.ServiceAffinityNone
				s.Spec.SessionAffinityConfig = nil
				return "sessionAffinity None"
			}
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			return "sessionAffinity ClientIP"
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			s.Spec.PublishNotReadyAddresses = !s.Spec.PublishNotReadyAddresses
			return fmt.Sprintf("publishNotReadyAddresses %v", s.Spec.PublishNotReadyAddresses)
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			if !nodePorts(s.Spec.Type) {
				return ""
			}
			if s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
				s.Spec.HealthCheckNodePort = 0
			} else {
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			}
			return "externalTrafficPolicy " + string(s.Spec.ExternalTrafficPolicy)
		}),
		onService(func(r *rand.Rand, s *corev1.Service) string {
			s.Spec.InternalTrafficPolicy = new(pick(r, corev1.ServiceInternalTrafficPolicyLocal, corev1.ServiceInternalTrafficPolicyCluster))
			return "internalTrafficPolicy " + string(*s.Spec.InternalTrafficPolicy)
		}),
	}
}

// portAllocated tells whether err is the API server's refusal of a node
// port another Service, or a leak, still holds.
func portAllocated(err error) bool {
	return err != nil && strings.Contains(err.Error(), "provided port is already allocated")
}
