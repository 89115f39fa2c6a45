package testutil

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	controllers "sunstrider.cn/operator/internal/controller"
)

// ConformanceKind adapts one kind to Conformance: how to make a parent,
// its children (none for a kind that writes none), and what envtest (no
// kube-controller-manager, no garbage collector, no kubelet) needs done
// for the parent to converge.
type ConformanceKind struct {
	// Suite is the package's suite; its manager runs the kind's controller.
	Suite *Suite
	// Controller is the controller's name in logs (its package's
	// ControllerName).
	Controller string
	// New returns a parent named name, not yet created. Each case makes
	// its own, under a name of its own (a kind with one object of a fixed
	// name ignores name: its cases run one after the other).
	New func(name string) client.Object
	// Children adapt each child the parent's controller writes, one
	// entry each. A kind that writes no child leaves it nil: its table
	// then runs the cases a kind without children has (Restart, Deletion,
	// Invariants).
	Children []ConformanceChild
	// Unadapted declares the kinds of children the controller writes that
	// have no entry in Children, each with why (required): the table runs
	// nothing for them. cmd/conformance_registered_test.go fails for a
	// child type the controller Owns that neither holds.
	Unadapted []UnadaptedChild
	// MakeReady, when set, does what envtest does not: the rollout and
	// Pods of the parent's children made ready, as the
	// kube-controller-manager and the kubelet would, or the Pod a
	// childless kind observes. It may fail (a child not there yet): it is
	// called again until the parent is Ready.
	MakeReady func(g gomega.Gomega, parent client.Object)
	// Restarted, when set, is called after each manager restart (to point
	// the package's variables at the new write counter).
	Restarted func()
	// SteadyState, when set, is the package's own steady-state test, run
	// inside the Restart case so that the suite restarts its manager once
	// for both: given the Restart case's t, it converges objects of its
	// own and shows the running manager reconciles them again without a
	// write; what it returns, the restarted manager must reconcile without
	// a write too.
	SteadyState func(t *testing.T) SteadyState
	// AfterDeletion, when set, asserts what the parent's deletion leaves
	// in effect (the OperatorConfiguration's settings), once the
	// controller reconciled it.
	AfterDeletion func(g gomega.Gomega, parent client.Object)
}

// ConformanceChild adapts one child of a kind to Conformance: where it
// is, how to make the operator write it, and which of ChildCases do not
// apply to it, with why.
type ConformanceChild struct {
	// Kind names the child in subtests and in the parents' names
	// ("Service"); unique among the kind's children.
	Kind string
	// Child returns the key of the parent's child (known before the parent
	// exists) and an empty object of its type.
	Child func(parent client.Object) (client.ObjectKey, client.Object)
	// Bring, when set, makes the operator write the child, for a child
	// that creating the parent does not bring (one written from a change
	// of the parent on: an Application's ControllerRevisions, from the
	// first change of its Pod template): given the parent just created,
	// it makes that change, waiting itself for what the change needs (the
	// child as it was before). It must not change parent, the object it
	// is given. Every parent a case converges gets the Bring of each
	// child; the Conflict case's parent gets its own child's.
	Bring func(g gomega.Gomega, parent client.Object)
	// Foreign returns an object of the child's type at key that someone
	// else would make: no owner reference, no operator label. Required
	// unless CaseConflict does not apply.
	Foreign func(key client.ObjectKey) client.Object
	// Change, when set, changes parent's spec so that the operator must
	// update the child; Changed asserts the child holds that change.
	Change  func(parent client.Object)
	Changed func(g gomega.Gomega, child client.Object)
	// Tamper changes, in child, a field the operator sets (another field
	// manager then writes it), which the operator puts back; Field reads
	// that field's value. Required unless CaseChildChanged does not apply.
	Tamper func(child client.Object)
	Field  func(child client.Object) string
	// Reported, when set, asserts what the parent's status reports of the
	// child (fields mirrored from it, or the workload it serves): it must
	// still be reported while the child's write is refused. A child of
	// which the status reports nothing leaves it nil.
	Reported func(g gomega.Gomega, parent client.Object)
	// DoesNotApply names the cases of ChildCases that do not apply to the
	// child, each with why (required): the table does not run them.
	DoesNotApply map[ConformanceCase]string
}

// UnadaptedChild is a kind of child Conformance does not run, and why.
type UnadaptedChild struct {
	// Child is an empty object of the child's type.
	Child client.Object
	// Why says why it has no ConformanceChild.
	Why string
}

// ConformanceCase is one case Conformance runs for each child.
type ConformanceCase string

// The cases of each child (ChildCases).
const (
	// CaseConflict: a foreign object in the child's place is left untouched
	// and reported (Ready=False ResourceConflict, Stalled, a Warning);
	// once it is gone, the conflict recheck brings the child.
	CaseConflict ConformanceCase = "Conflict"
	// CaseRefusedWrite: the API server refusing the child's write as
	// Forbidden (an admission policy) makes the parent Ready=False
	// ApplyFailed, Stalled, with the policy's message, what the status
	// reports of the child still reported; the refusal is returned as the
	// reconcile's error (retried with backoff): once the policy is gone,
	// the write is made with no other event.
	CaseRefusedWrite ConformanceCase = "RefusedWrite"
	// CaseInvalid: the API server refusing the child's write as Invalid
	// (422) does the same to the status, but is retried only at the next
	// event (controllers.Policy): no reconcile error, and once the policy
	// is gone the write waits for an event of the parent (a nudge).
	CaseInvalid ConformanceCase = "Invalid"
	// CaseChildDeleted: a deleted child is made again, controlled by the
	// parent.
	CaseChildDeleted ConformanceCase = "ChildDeleted"
	// CaseChildChanged: a field the operator sets, changed by another field
	// manager, is put back.
	CaseChildChanged ConformanceCase = "ChildChanged"
)

// ChildCases are the cases Conformance runs for each child, in order.
var ChildCases = []ConformanceCase{CaseConflict, CaseRefusedWrite, CaseInvalid, CaseChildDeleted, CaseChildChanged}

// SteadyState is what a package's steady-state test (ConformanceKind
// SteadyState) leaves to the Restart case.
type SteadyState struct {
	// Scopes select the writes about the test's objects; Keys are the
	// objects the restarted manager must reconcile, without a write in
	// Scopes.
	Scopes []Scope
	Keys   []client.ObjectKey
	// Then, when set, runs once the restarted manager was found quiet: what
	// the test checks of the fresh manager (that it still acts, say).
	Then func(t *testing.T)
}

// Conformance runs the behaviour every kind shares against k's controller
// in envtest, one subtest a case. For every kind:
//
//   - Restart: a restarted manager reconciles a converged parent without a
//     write; the package's own steady-state test (SteadyState), when it
//     has one, runs inside it, on the same restart.
//   - Deletion: every child is controlled by the parent and blocks its
//     deletion (the garbage collector, which envtest does not run, removes
//     it); deleting the parent makes no write and no reconcile error about
//     it (controller-runtime's reconcile error counter, each error told
//     apart by the values the log names it with, whatever their keys);
//     AfterDeletion holds.
//   - Invariants: every status of the kind written meanwhile keeps the
//     status invariants (StatusInvariants), the operator wrote some, and
//     the suite's own checker (Suite.Check) watches the kind.
//
// Then, for every child, the ChildCases that apply to it (Children/<its
// Kind>/<case>); none for a kind of child declared Unadapted. A kind
// without children runs only the first three.
//
// The parents live in the namespace of their children; each case makes
// its own (and changes it as the Bring of the children creating it does
// not bring say) and deletes it when it ends. Restart runs first (its fresh
// manager's log is recorded: the reconcile errors, and the reconciles'
// starts and ends; a run that leaves Restart out, with -run, restarts the
// manager so before the next case), then Deletion; the children's cases,
// which expect writes, then run side by side; Invariants last.
//
// Every controller cmd/main.go sets up has an adapter: the Application
// (apps), the Guestbook (webapp), the Drink (example), the
// MyCustomResource (poc) and the OperatorConfiguration (config);
// cmd/conformance_registered_test.go fails for one without.
func Conformance(t *testing.T, k ConformanceKind) {
	t.Helper()
	if problems := k.problems(); len(problems) > 0 {
		t.Fatalf("the conformance adapter of %s:\n  %s", k.Controller, strings.Join(problems, "\n  "))
	}
	c := &conformance{ConformanceKind: k, log: newManagerLog()}
	checker := c.startInvariants(t)
	// Restart is the one case that stops the manager: it runs first, and
	// its fresh manager records the reconcile errors the others look at.
	// Both hold a window in which nothing may be written in the parent's
	// namespace: they run alone.
	if !t.Run("Restart", c.restartIsQuiet) || !t.Run("Deletion", c.deletion) {
		return
	}
	if len(k.Children) > 0 && c.recording(t) {
		// The others act on parents of their own, on the same manager, and
		// expect writes: they run side by side, all at once (most of their
		// time is waiting on the manager, not -parallel's CPUs).
		t.Run("Children", func(t *testing.T) {
			var children sync.WaitGroup
			for _, child := range k.Children {
				children.Go(func() {
					t.Run(child.Kind, func(t *testing.T) {
						var cases sync.WaitGroup
						for _, kase := range ChildCases {
							if _, no := child.DoesNotApply[kase]; !no {
								cases.Go(func() { t.Run(string(kase), func(t *testing.T) { c.childCase(kase)(t, child) }) })
							}
						}
						cases.Wait()
					})
				})
			}
			children.Wait()
		})
	}
	t.Run("Invariants", func(t *testing.T) { c.invariants(t, checker) })
}

// problems says what makes k unfit for Conformance: a field it needs
// missing, a case declared not to apply without why, a case that applies
// without what it needs.
func (k ConformanceKind) problems() []string {
	var out []string
	if k.Suite == nil || k.Controller == "" || k.New == nil {
		out = append(out, "Suite, Controller and New are required")
	}
	for i, u := range k.Unadapted {
		if u.Child == nil || strings.TrimSpace(u.Why) == "" {
			out = append(out, fmt.Sprintf("Unadapted[%d]: Child and Why are required", i))
		}
	}
	kinds := map[string]bool{}
	for i, ch := range k.Children {
		name := ch.Kind
		if name == "" {
			name = fmt.Sprintf("Children[%d]", i)
			out = append(out, name+": Kind is required")
		} else if kinds[name] {
			out = append(out, name+": two children of that Kind")
		}
		kinds[name] = true
		if ch.Child == nil {
			out = append(out, name+": Child is required")
		}
		for _, kase := range slices.Sorted(maps.Keys(ch.DoesNotApply)) {
			why := ch.DoesNotApply[kase]
			if !slices.Contains(ChildCases, kase) {
				out = append(out, fmt.Sprintf("%s: DoesNotApply names %q, which is no case", name, kase))
			}
			if strings.TrimSpace(why) == "" {
				out = append(out, fmt.Sprintf("%s: DoesNotApply[%s] must say why the case does not apply", name, kase))
			}
		}
		applies := func(kase ConformanceCase) bool { _, no := ch.DoesNotApply[kase]; return !no }
		if (ch.Change == nil) != (ch.Changed == nil) {
			out = append(out, name+": Change and Changed go together")
		}
		if (ch.Tamper == nil) != (ch.Field == nil) {
			out = append(out, name+": Tamper and Field go together")
		}
		if applies(CaseConflict) != (ch.Foreign != nil) {
			out = append(out, name+": Foreign is set exactly when Conflict applies")
		}
		if applies(CaseChildChanged) != (ch.Tamper != nil) {
			out = append(out, name+": Tamper and Field are set exactly when ChildChanged applies")
		}
	}
	return out
}

// conformance is one run of Conformance.
type conformance struct {
	ConformanceKind
	// log records the running manager's reconcile errors and ends, once
	// restarted is set.
	log       *managerLog
	restarted bool
	// created counts the parents the cases made.
	created atomic.Int32
}

func (c *conformance) client() client.Client { return c.Suite.Client }

// restart stops the manager and starts a fresh one that records its
// reconcile errors.
func (c *conformance) restart(t *testing.T) {
	t.Helper()
	c.Suite.StopManager()
	if err := c.Suite.StartManager(c.log.option); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	c.restarted = true
	if c.Restarted != nil {
		c.Restarted()
	}
}

// recording restarts the manager to record its log, unless the Restart
// case did already (-run may leave it out), and tells whether it does.
func (c *conformance) recording(t *testing.T) bool {
	t.Helper()
	if !c.restarted {
		c.restart(t)
	}
	return !t.Failed()
}

// create creates the parent named name, deleted when the test ends.
func (c *conformance) create(t *testing.T, g gomega.Gomega, name string) client.Object {
	t.Helper()
	parent := c.New(name)
	g.Expect(c.client().Create(context.Background(), parent)).To(gomega.Succeed())
	c.created.Add(1)
	t.Cleanup(func() { _ = c.client().Delete(context.Background(), parent) })
	return parent
}

// get reads the live parent.
func (c *conformance) get(g gomega.Gomega, parent client.Object) client.Object {
	out := parent.DeepCopyObject().(client.Object)
	g.Expect(c.client().Get(context.Background(), client.ObjectKeyFromObject(parent), out)).To(gomega.Succeed())
	return out
}

// getChild reads the live child ch of parent.
func (c *conformance) getChild(g gomega.Gomega, ch ConformanceChild, parent client.Object) client.Object {
	key, child := ch.Child(parent)
	g.Expect(c.client().Get(context.Background(), key, child)).To(gomega.Succeed())
	return child
}

// condition returns the parent's condition of type, nil when it has none.
func (c *conformance) condition(g gomega.Gomega, parent client.Object, conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(conditionsOf(g, c.get(g, parent)), conditionType)
}

// conditionsOf reads obj's status.conditions, whatever its kind.
func conditionsOf(g gomega.Gomega, obj client.Object) []metav1.Condition {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var status struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	if s, ok := u["status"].(map[string]any); ok {
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(s, &status)).To(gomega.Succeed())
	}
	return status.Conditions
}

// expectReady makes the parent's children ready as envtest cannot
// (MakeReady) until the parent is Ready=True at its current generation.
func (c *conformance) expectReady(g *gomega.WithT, parent client.Object) {
	g.Eventually(func(g gomega.Gomega) {
		live := c.get(g, parent)
		ready := meta.FindStatusCondition(conditionsOf(g, live), controllers.ConditionReady)
		if ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == live.GetGeneration() {
			return
		}
		if c.MakeReady != nil {
			c.MakeReady(g, live)
		}
		g.Expect(ready).NotTo(gomega.BeNil(), "Ready")
		g.Expect(ready.Status).To(gomega.Equal(metav1.ConditionTrue), "Ready: %s: %s", ready.Reason, ready.Message)
		g.Expect(ready.ObservedGeneration).To(gomega.Equal(live.GetGeneration()))
	}).Should(gomega.Succeed())
}

// converged creates the parent named name, brings the children creating
// it does not (Bring), and waits until it is Ready, each of its children
// controlled by it.
func (c *conformance) converged(t *testing.T, g *gomega.WithT, name string) client.Object {
	t.Helper()
	parent := c.create(t, g, name)
	for _, ch := range c.Children {
		if ch.Bring != nil {
			ch.Bring(g, parent)
		}
	}
	for _, ch := range c.Children {
		c.expectControlled(g, ch, parent)
	}
	c.expectReady(g, parent)
	return parent
}

// scopes select the writes about parent: in its namespace, or of itself
// when it is cluster-scoped, and in its children's namespaces.
func (c *conformance) scopes(g gomega.Gomega, parent client.Object) []Scope {
	var scopes []Scope
	if ns := parent.GetNamespace(); ns != "" {
		scopes = append(scopes, InNamespace(ns))
	} else {
		gvk, err := c.client().GroupVersionKindFor(parent)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		mapping, err := c.client().RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		scopes = append(scopes, ClusterObject(mapping.Resource.Resource, gvk.Kind, parent.GetName()))
	}
	for _, ch := range c.Children {
		if key, _ := ch.Child(parent); key.Namespace != parent.GetNamespace() {
			scopes = append(scopes, InNamespace(key.Namespace))
		}
	}
	return scopes
}

// settle waits until the manager makes no more writes about parent and
// returns the view of them.
func (c *conformance) settle(g *gomega.WithT, parent client.Object) *WriteView {
	view := c.Suite.Writes.In(c.scopes(g, parent)...)
	g.Eventually(view.Drain).WithPolling(time.Second).Should(gomega.BeZero(), "the manager settles")
	return view
}

// restartIsQuiet: a fresh manager reconciles a converged parent and
// writes nothing; nor for the objects of the package's steady-state test,
// which runs before the restart and, with Then, after it.
func (c *conformance) restartIsQuiet(t *testing.T) {
	g := NewG(t)
	parent := c.converged(t, g, "conformance-restart")
	var steady SteadyState
	if c.SteadyState != nil {
		steady = c.SteadyState(t)
		if t.Failed() {
			return
		}
	}
	c.settle(g, parent)
	c.restart(t)
	scopes := append(c.scopes(g, parent), steady.Scopes...)
	keys := append([]client.ObjectKey{client.ObjectKeyFromObject(parent)}, steady.Keys...)
	c.Suite.ExpectQuiet(g, c.Suite.Writes.In(scopes...), nil, c.Controller, keys...)
	if steady.Then != nil {
		steady.Then(t)
	}
}

// deletion: each child blocks the parent's deletion until the garbage
// collector removes it; deleting the parent makes no write and no error.
func (c *conformance) deletion(t *testing.T) {
	if !c.recording(t) {
		return
	}
	g := NewG(t)
	ctx := context.Background()
	parent := c.converged(t, g, "conformance-delete")
	gvk, err := c.client().GroupVersionKindFor(parent)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, ch := range c.Children {
		ref := metav1.GetControllerOf(c.getChild(g, ch, parent))
		g.Expect(ref).NotTo(gomega.BeNil(), "the %s has a controller", ch.Kind)
		g.Expect(*ref).To(gomega.Equal(metav1.OwnerReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: parent.GetName(), UID: parent.GetUID(),
			Controller: new(true), BlockOwnerDeletion: new(true),
		}), "the %s's controller reference", ch.Kind)
	}

	view := c.settle(g, parent)
	key := client.ObjectKeyFromObject(parent)
	mark := c.Suite.Reconciles.Mark()
	logged := c.log.mark()
	errorsBefore, err := ReconcileErrorTotal(c.Controller)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(c.client().Delete(ctx, parent)).To(gomega.Succeed())
	c.Suite.ExpectQuiet(g, view, mark, c.Controller, key)
	c.expectNoReconcileError(g, key, logged, errorsBefore)
	if c.AfterDeletion != nil {
		c.AfterDeletion(g, parent)
	}
}

// expectNoReconcileError expects no reconcile error about key since the
// manager had logged the first logged errors and its controller's
// controller_runtime_reconcile_errors_total was before. The metric counts
// every reconcile error whatever the log says; the log tells which object
// each was about. An error of the metric the log does not show fails too:
// otherwise a log that no longer reached the recorder would pass unseen.
func (c *conformance) expectNoReconcileError(g gomega.Gomega, key types.NamespacedName, logged int, before float64) {
	after, err := ReconcileErrorTotal(c.Controller)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	// controller-runtime counts an error just before it logs it.
	g.Eventually(func() int { return len(c.log.since(logged)) }).Should(gomega.BeNumerically(">=", after-before),
		"controller_runtime_reconcile_errors_total of %s rose by %v since %s, "+
			"more than the errors its manager logged: they cannot be told apart", c.Controller, after-before, key)
	g.Expect(c.log.about(logged, key)).To(gomega.BeEmpty(), "reconcile errors about %s", key)
}

// startInvariants starts checking every status of the kind written from
// now on (StatusInvariants); the Invariants case reads the verdict.
func (c *conformance) startInvariants(t *testing.T) *InvariantChecker {
	t.Helper()
	checker, err := StartInvariantChecker(c.Suite.Config, c.Suite.Scheme, c.New("conformance-invariants"))
	if err != nil {
		t.Fatalf("starting the invariant checker: %v", err)
	}
	t.Cleanup(func() { checker.Stop() })
	return checker
}

// invariants: every status of the kind written since the conformance
// began kept the status invariants, the operator wrote some (with
// status.observedGeneration) when a case made a parent, and the suite's
// own checker, which sees every other test's statuses too, watches the
// kind.
func (c *conformance) invariants(t *testing.T, checker *InvariantChecker) {
	g := NewG(t)
	gvk, err := apiutil.GVKForObject(c.New("conformance-invariants"), c.Suite.Scheme)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(slices.ContainsFunc(c.Suite.Check, func(obj client.Object) bool {
		checked, err := apiutil.GVKForObject(obj, c.Suite.Scheme)
		return err == nil && checked.GroupKind() == gvk.GroupKind()
	})).To(gomega.BeTrue(), "the suite's Check lists no %s: its invariant checker does not watch the kind", gvk.Kind)
	seen, broken := checker.Stop()
	g.Expect(broken).To(gomega.BeEmpty(), "statuses that break the invariants (%d seen)", seen)
	if c.created.Load() > 0 {
		// Not when -run left every case out.
		g.Expect(checker.Unchecked()).To(gomega.BeEmpty())
	}
}
