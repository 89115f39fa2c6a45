package testutil

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
)

// ConformanceKind adapts one kind with a child to Conformance: how to make
// a parent, where its child is, and what envtest (no kube-controller-manager,
// no garbage collector) needs done for the parent to converge.
type ConformanceKind struct {
	// Suite is the package's suite; its manager runs the kind's controller.
	Suite *Suite
	// Controller is the controller's name in logs ("example-drink").
	Controller string
	// New returns a parent named name, not yet created. Each case makes
	// its own, under a name of its own.
	New func(name string) client.Object
	// Child returns the key of the parent's child (known before the parent
	// exists) and an empty object of its type.
	Child func(parent client.Object) (client.ObjectKey, client.Object)
	// Foreign returns an object of the child's type at key that someone
	// else would make: no owner reference, no operator label.
	Foreign func(key client.ObjectKey) client.Object
	// Change changes parent's spec so that the operator must write the
	// child; Changed asserts the child holds that change.
	Change  func(parent client.Object)
	Changed func(g gomega.Gomega, child client.Object)
	// Tamper changes, in child, a field the operator sets (another field
	// manager then writes it); Field reads that field's value.
	Tamper func(child client.Object)
	Field  func(child client.Object) string
	// Reported asserts that the parent's status fields mirrored from its
	// child are set.
	Reported func(g gomega.Gomega, parent client.Object)
	// MakeReady, when set, does what envtest does not: the rollout and
	// Pods of the parent's child made ready, as the kube-controller-manager
	// and the kubelet would. It may fail (the child not there yet): it is
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
}

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

// Field managers of the objects Conformance writes as someone other than
// the operator.
const (
	conformanceForeignManager = "conformance-foreign"
	conformanceOtherManager   = "conformance-other"
	// conformancePolicyMessage is the refusal of the admission policy the
	// refused-write case puts in the child's way.
	conformancePolicyMessage = "the conformance test's admission policy freezes this object"
)

// Conformance runs the behaviour every kind with a child shares, one
// subtest a case, against k's controller in envtest:
//
//   - Conflict: a foreign object in the child's place is left untouched and
//     reported (Ready=False ResourceConflict, Stalled, a Warning); once it is
//     gone, the conflict recheck brings the child.
//   - RefusedWrite: the API server refusing the child's update (an admission
//     policy) makes the parent Ready=False ApplyFailed, Stalled, with the
//     policy's message, the child as it was still reported; once the policy
//     is gone, the spec reaches the child.
//   - ChildDeletedOrChanged: a deleted child is made again, a field the
//     operator sets changed by another field manager is put back.
//   - Restart: a restarted manager reconciles a converged parent without a
//     write; the package's own steady-state test (SteadyState), when it
//     has one, runs inside it, on the same restart.
//   - Deletion: the child is controlled by the parent and blocks its
//     deletion (the garbage collector, which envtest does not run, removes
//     it); deleting the parent makes no write and no reconcile error about
//     it (controller-runtime's reconcile error counter, each error told
//     apart by the values the log names it with, whatever their keys).
//
// The parents live in the namespace of their children; each case makes
// its own and deletes it when it ends. Restart runs first (its fresh
// manager records the reconcile errors), then Deletion; the cases that
// expect writes then run side by side.
//
// Application (apps, its Deployment), Guestbook (webapp, its StatefulSet)
// and Drink (example, its ConfigMap) run it. MyCustomResource (poc) has no
// child, so none of these cases applies to it: it has no adapter.
func Conformance(t *testing.T, k ConformanceKind) {
	t.Helper()
	c := &conformance{ConformanceKind: k, errs: newReconcileErrors()}
	// Restart is the one case that stops the manager: it runs first, and
	// its fresh manager records the reconcile errors Deletion looks at.
	// Both hold a window in which nothing may be written in the parent's
	// namespace: they run alone.
	if !t.Run("Restart", c.restartIsQuiet) || !t.Run("Deletion", c.deletion) {
		return
	}
	// The others act on parents of their own, on the same manager, and
	// expect writes: they run side by side (most of their time is waiting
	// on the manager).
	t.Run("Shared", func(t *testing.T) {
		for name, run := range map[string]func(*testing.T){
			"Conflict":              c.conflict,
			"RefusedWrite":          c.refusedWrite,
			"ChildDeletedOrChanged": c.childDeletedOrChanged,
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				run(t)
			})
		}
	})
}

// conformance is one run of Conformance.
type conformance struct {
	ConformanceKind
	// errs records the running manager's reconcile errors.
	errs *reconcileErrors
}

func (c *conformance) client() client.Client { return c.Suite.Client }

// restart stops the manager and starts a fresh one that records its
// reconcile errors.
func (c *conformance) restart(t *testing.T) {
	t.Helper()
	c.Suite.StopManager()
	if err := c.Suite.StartManager(c.errs.option); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	if c.Restarted != nil {
		c.Restarted()
	}
}

// create creates the parent named name, deleted when the test ends.
func (c *conformance) create(t *testing.T, g gomega.Gomega, name string) client.Object {
	t.Helper()
	parent := c.New(name)
	g.Expect(c.client().Create(context.Background(), parent)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.client().Delete(context.Background(), parent) })
	return parent
}

// get reads the live parent.
func (c *conformance) get(g gomega.Gomega, parent client.Object) client.Object {
	out := parent.DeepCopyObject().(client.Object)
	g.Expect(c.client().Get(context.Background(), client.ObjectKeyFromObject(parent), out)).To(gomega.Succeed())
	return out
}

// getChild reads the live child of parent.
func (c *conformance) getChild(g gomega.Gomega, parent client.Object) client.Object {
	key, child := c.Child(parent)
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

// expectBlocked waits until parent, at its current generation, is
// Ready=False with reason and Stalled with the same reason, and returns
// Ready.
func (c *conformance) expectBlocked(g *gomega.WithT, parent client.Object, reason string, also func(gomega.Gomega, client.Object)) metav1.Condition {
	var ready metav1.Condition
	g.Eventually(func(g gomega.Gomega) {
		live := c.get(g, parent)
		conds := conditionsOf(g, live)
		r := meta.FindStatusCondition(conds, controllers.ConditionReady)
		g.Expect(r).NotTo(gomega.BeNil(), "Ready")
		g.Expect(r.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(r.Reason).To(gomega.Equal(reason))
		g.Expect(r.ObservedGeneration).To(gomega.Equal(live.GetGeneration()))
		stalled := meta.FindStatusCondition(conds, controllers.ConditionStalled)
		g.Expect(stalled).NotTo(gomega.BeNil(), "Stalled")
		g.Expect(stalled.Status).To(gomega.Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(gomega.Equal(reason))
		if also != nil {
			also(g, live)
		}
		ready = *r
	}).Should(gomega.Succeed())
	return ready
}

// expectReady makes the parent's child ready as envtest cannot (MakeReady)
// until the parent is Ready=True at its current generation.
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

// expectControlled waits until the parent's child exists, controlled by
// the parent.
func (c *conformance) expectControlled(g *gomega.WithT, parent client.Object) {
	g.Eventually(func(g gomega.Gomega) {
		child := c.getChild(g, parent)
		g.Expect(apply.IsControlledBy(child, parent.GetUID())).To(gomega.BeTrue(), "the child is controlled by the parent")
	}).Should(gomega.Succeed())
}

// converged creates the parent named name and waits until it is Ready, its
// child controlled by it.
func (c *conformance) converged(t *testing.T, g *gomega.WithT, name string) client.Object {
	t.Helper()
	parent := c.create(t, g, name)
	c.expectControlled(g, parent)
	c.expectReady(g, parent)
	return parent
}

// scopes select the writes about parent: in its child's namespace (its
// own when it is namespaced) and, when cluster-scoped, of itself.
func (c *conformance) scopes(g gomega.Gomega, parent client.Object) []Scope {
	key, _ := c.Child(parent)
	scopes := []Scope{InNamespace(key.Namespace)}
	if parent.GetNamespace() == "" {
		gvk, err := c.client().GroupVersionKindFor(parent)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		mapping, err := c.client().RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		scopes = append(scopes, ClusterObject(mapping.Resource.Resource, gvk.Kind, parent.GetName()))
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

// conflict: a foreign object in the child's place before the parent exists.
func (c *conformance) conflict(t *testing.T) {
	g := NewG(t)
	ctx := context.Background()
	parent := c.New("conformance-conflict")
	key, _ := c.Child(parent)
	foreign := c.Foreign(key)
	g.Expect(c.client().Create(ctx, foreign, client.FieldOwner(conformanceForeignManager))).To(gomega.Succeed())
	parent = c.create(t, g, parent.GetName())

	ready := c.expectBlocked(g, parent, controllers.ReasonResourceConflict, nil)
	g.Expect(ready.Message).To(gomega.ContainSubstring(key.Name), "Ready names the object in the way")
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.warnings(g, parent, controllers.ReasonResourceConflict)).NotTo(gomega.BeEmpty())
	}).Should(gomega.Succeed(), "a Warning event about the conflict")

	// Left untouched, also by a reconcile after the conflict was reported.
	mark := c.Suite.Reconciles.Mark()
	g.Expect(Nudge(ctx, c.client(), parent)).To(gomega.Succeed())
	c.Suite.ExpectReconciled(g, mark, c.Controller, client.ObjectKeyFromObject(parent))
	live := foreign.DeepCopyObject().(client.Object)
	g.Expect(c.client().Get(ctx, key, live)).To(gomega.Succeed())
	g.Expect(live.GetResourceVersion()).To(gomega.Equal(foreign.GetResourceVersion()), "the foreign object is unchanged")
	g.Expect(live.GetOwnerReferences()).To(gomega.BeEmpty())
	g.Expect(live.GetLabels()).NotTo(gomega.HaveKey(apply.ManagedByLabel))

	// Once it is gone, the conflict recheck (nothing else would) brings
	// the parent its child.
	g.Expect(c.client().Delete(ctx, foreign)).To(gomega.Succeed())
	c.expectControlled(g, parent)
	g.Eventually(func(g gomega.Gomega) {
		r := c.condition(g, parent, controllers.ConditionReady)
		g.Expect(r).NotTo(gomega.BeNil())
		g.Expect(r.Reason).NotTo(gomega.Equal(controllers.ReasonResourceConflict))
		g.Expect(c.condition(g, parent, controllers.ConditionStalled)).To(gomega.BeNil(), "no longer Stalled")
	}).Should(gomega.Succeed())
}

// warnings returns the reasons-matching Warning events about parent.
func (c *conformance) warnings(g gomega.Gomega, parent client.Object, reason string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(c.client().List(context.Background(), list)).To(gomega.Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.UID == parent.GetUID() && e.Type == corev1.EventTypeWarning && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// refusedWrite: the API server refuses the converged child's update.
func (c *conformance) refusedWrite(t *testing.T) {
	g := NewG(t)
	ctx := context.Background()
	parent := c.converged(t, g, "conformance-refused")
	g.Eventually(func(g gomega.Gomega) { c.Reported(g, c.get(g, parent)) }).Should(gomega.Succeed(),
		"the child is reported before the refusal")
	removePolicy := c.freeze(t, g, parent)
	before := c.getChild(g, parent)

	g.Eventually(func(g gomega.Gomega) {
		live := c.get(g, parent)
		c.Change(live)
		g.Expect(c.client().Update(ctx, live)).To(gomega.Succeed())
	}).Should(gomega.Succeed())
	ready := c.expectBlocked(g, parent, controllers.ReasonApplyFailed, func(g gomega.Gomega, live client.Object) {
		c.Reported(g, live)
	})
	g.Expect(ready.Message).To(gomega.ContainSubstring(conformancePolicyMessage))
	after := c.getChild(g, parent)
	g.Expect(after.GetResourceVersion()).To(gomega.Equal(before.GetResourceVersion()), "the child is unchanged")

	// Once the policy is gone, the spec reaches the child (the refusal is
	// retried) and the parent recovers.
	removePolicy()
	g.Eventually(func(g gomega.Gomega) { c.Changed(g, c.getChild(g, parent)) }).Should(gomega.Succeed())
	c.expectReady(g, parent)
}

// freeze makes the API server refuse every update of parent's child with
// conformancePolicyMessage (a ValidatingAdmissionPolicy, as a policy
// engine would, answering Forbidden), until the returned func or the end
// of the test removes it.
func (c *conformance) freeze(t *testing.T, g *gomega.WithT, parent client.Object) func() {
	t.Helper()
	ctx := context.Background()
	key, child := c.Child(parent)
	gvk, err := c.client().GroupVersionKindFor(child)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	mapping, err := c.client().RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	name := "conformance-" + key.Namespace + "-" + key.Name
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					ResourceNames: []string{key.Name},
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups:   []string{gvk.Group},
							APIVersions: []string{gvk.Version},
							Resources:   []string{mapping.Resource.Resource},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "false",
				Message:    conformancePolicyMessage,
				Reason:     new(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: key.Namespace},
			}},
		},
	}
	g.Expect(c.client().Create(ctx, policy)).To(gomega.Succeed())
	g.Expect(c.client().Create(ctx, binding)).To(gomega.Succeed())
	remove := sync.OnceFunc(func() {
		g.Expect(client.IgnoreNotFound(c.client().Delete(ctx, binding))).To(gomega.Succeed())
		g.Expect(client.IgnoreNotFound(c.client().Delete(ctx, policy))).To(gomega.Succeed())
	})
	t.Cleanup(remove)
	// In force once a dry-run update of the child is refused.
	g.Eventually(func(g gomega.Gomega) {
		probe := c.getChild(g, parent)
		probe.SetAnnotations(map[string]string{"conformance.sunstrider.cn/probe": "1"})
		err := c.client().Update(ctx, probe, client.DryRunAll)
		g.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "policy not in force yet: %v", err)
		g.Expect(err.Error()).To(gomega.ContainSubstring(conformancePolicyMessage))
	}).Should(gomega.Succeed())
	return remove
}

// childDeletedOrChanged: the child deleted, then changed, behind the
// operator's back.
func (c *conformance) childDeletedOrChanged(t *testing.T) {
	g := NewG(t)
	ctx := context.Background()
	parent := c.converged(t, g, "conformance-drift")
	first := c.getChild(g, parent)

	g.Expect(c.client().Delete(ctx, first)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		child := c.getChild(g, parent)
		g.Expect(child.GetUID()).NotTo(gomega.Equal(first.GetUID()), "a new child")
		g.Expect(apply.IsControlledBy(child, parent.GetUID())).To(gomega.BeTrue())
	}).Should(gomega.Succeed(), "the deleted child is made again")

	var want string
	g.Eventually(func(g gomega.Gomega) {
		child := c.getChild(g, parent)
		want = c.Field(child)
		c.Tamper(child)
		g.Expect(c.client().Update(ctx, child, client.FieldOwner(conformanceOtherManager))).To(gomega.Succeed())
		g.Expect(c.Field(child)).NotTo(gomega.Equal(want), "the field was changed")
	}).Should(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Field(c.getChild(g, parent))).To(gomega.Equal(want))
	}).Should(gomega.Succeed(), "the changed field is put back")
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

// deletion: the child blocks the parent's deletion until the garbage
// collector removes it; deleting the parent makes no write and no error.
func (c *conformance) deletion(t *testing.T) {
	g := NewG(t)
	ctx := context.Background()
	parent := c.converged(t, g, "conformance-delete")
	gvk, err := c.client().GroupVersionKindFor(parent)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	ref := metav1.GetControllerOf(c.getChild(g, parent))
	g.Expect(ref).NotTo(gomega.BeNil(), "the child has a controller")
	g.Expect(*ref).To(gomega.Equal(metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: parent.GetName(), UID: parent.GetUID(),
		Controller: new(true), BlockOwnerDeletion: new(true),
	}))

	view := c.settle(g, parent)
	key := client.ObjectKeyFromObject(parent)
	mark := c.Suite.Reconciles.Mark()
	logged := c.errs.mark()
	errorsBefore, err := ReconcileErrorTotal(c.Controller)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(c.client().Delete(ctx, parent)).To(gomega.Succeed())
	c.Suite.ExpectQuiet(g, view, mark, c.Controller, key)
	c.expectNoReconcileError(g, key, logged, errorsBefore)
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
	g.Eventually(func() int { return len(c.errs.since(logged)) }).Should(gomega.BeNumerically(">=", after-before),
		"controller_runtime_reconcile_errors_total of %s rose by %v since the parent was deleted, "+
			"more than the errors its manager logged: they cannot be told apart", c.Controller, after-before)
	var about []string
	for _, e := range c.errs.since(logged) {
		if e.about(key) {
			about = append(about, e.text)
		}
	}
	g.Expect(about).To(gomega.BeEmpty(), "reconcile errors after the deletion")
}

// reconcileErrors records the errors a manager logs, each with the values
// its logger carried: which object a reconcile error is about is read from
// those values (controller-runtime names the request in several), not from
// the keys they are logged under.
type reconcileErrors struct {
	mu     sync.Mutex
	logged []loggedError
}

// loggedError is one error a manager logged.
type loggedError struct {
	text string
	// values are the values of the logger's key-value pairs and of the
	// call's, keys left out.
	values []any
}

func newReconcileErrors() *reconcileErrors { return &reconcileErrors{} }

// option makes a manager's logger record its errors in e.
func (e *reconcileErrors) option(o *ctrl.Options) {
	inner := o.Logger.GetSink()
	if cd, ok := inner.(logr.CallDepthLogSink); ok {
		inner = cd.WithCallDepth(1)
	}
	o.Logger = logr.New(&errorSink{errs: e, inner: inner})
}

// mark returns how many errors were logged so far.
func (e *reconcileErrors) mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.logged)
}

// since returns the errors logged after the first n.
func (e *reconcileErrors) since(n int) []loggedError {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.logged[n:])
}

// about tells whether the error was logged about key: its values name the
// object, whatever their keys (controller-runtime logs a request's
// namespace and name, and a klog.ObjectRef of it under its kind).
func (l loggedError) about(key types.NamespacedName) bool {
	ref := key.Name
	if key.Namespace != "" {
		ref = key.Namespace + "/" + key.Name
	}
	name, namespace := false, key.Namespace == ""
	for _, v := range l.values {
		switch v := v.(type) {
		case string:
			name = name || v == key.Name
			namespace = namespace || v == key.Namespace
		case fmt.Stringer:
			if v.String() == ref {
				return true
			}
		}
	}
	return name && namespace
}

// errorSink hands everything to inner and records every error logged,
// with the values of the logger it was logged through.
type errorSink struct {
	errs   *reconcileErrors
	inner  logr.LogSink
	values []any
}

func (s *errorSink) Init(logr.RuntimeInfo) {}

func (s *errorSink) Enabled(level int) bool { return s.inner.Enabled(level) }

func (s *errorSink) Info(level int, msg string, keysAndValues ...any) {
	s.inner.Info(level, msg, keysAndValues...)
}

func (s *errorSink) Error(err error, msg string, keysAndValues ...any) {
	s.errs.mu.Lock()
	s.errs.logged = append(s.errs.logged, loggedError{
		text:   fmt.Sprintf("%s: %v", msg, err),
		values: append(slices.Clone(s.values), valuesOf(keysAndValues)...),
	})
	s.errs.mu.Unlock()
	s.inner.Error(err, msg, keysAndValues...)
}

func (s *errorSink) WithValues(keysAndValues ...any) logr.LogSink {
	out := *s
	out.inner = s.inner.WithValues(keysAndValues...)
	out.values = append(slices.Clone(s.values), valuesOf(keysAndValues)...)
	return &out
}

func (s *errorSink) WithName(name string) logr.LogSink {
	out := *s
	out.inner = s.inner.WithName(name)
	return &out
}

// valuesOf returns the values of key-value pairs.
func valuesOf(keysAndValues []any) []any {
	values := make([]any, 0, len(keysAndValues)/2)
	for i := 1; i < len(keysAndValues); i += 2 {
		values = append(values, keysAndValues[i])
	}
	return values
}
