package testutil

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
)

// Field managers of the objects Conformance writes as someone other than
// the operator.
const (
	conformanceForeignManager = "conformance-foreign"
	conformanceOtherManager   = "conformance-other"
	// conformancePolicyMessage is the refusal of the admission policy the
	// refusal cases put in the child's way.
	conformancePolicyMessage = "the conformance test's admission policy freezes this object"
	// conformanceNoRetry is how long the Invalid case watches the child
	// after the policy is gone: a refusal retried with backoff, or at the
	// conflict recheck (2 s in the suites), would be written by then.
	conformanceNoRetry = 3 * time.Second
)

// childCase returns the case kase of a child.
func (c *conformance) childCase(kase ConformanceCase) func(*testing.T, ConformanceChild) {
	switch kase {
	case CaseConflict:
		return c.conflict
	case CaseRefusedWrite:
		return func(t *testing.T, ch ConformanceChild) { c.refused(t, ch, metav1.StatusReasonForbidden) }
	case CaseInvalid:
		return func(t *testing.T, ch ConformanceChild) { c.refused(t, ch, metav1.StatusReasonInvalid) }
	case CaseChildDeleted:
		return c.childDeleted
	case CaseChildChanged:
		return c.childChanged
	}
	panic("no conformance case " + kase)
}

// parentName is the name of the parent of case kase for child ch: each
// case has its own.
func parentName(kase ConformanceCase, ch ConformanceChild) string {
	short := map[ConformanceCase]string{CaseConflict: "conflict", CaseRefusedWrite: "refused", CaseInvalid: "invalid",
		CaseChildDeleted: "deleted", CaseChildChanged: "changed"}[kase]
	return "conformance-" + short + "-" + strings.ToLower(ch.Kind)
}

// expectControlled waits until the parent's child ch exists, controlled by
// the parent.
func (c *conformance) expectControlled(g *gomega.WithT, ch ConformanceChild, parent client.Object) {
	g.Eventually(func(g gomega.Gomega) {
		child := c.getChild(g, ch, parent)
		g.Expect(apply.IsControlledBy(child, parent.GetUID())).To(gomega.BeTrue(), "the %s is controlled by the parent", ch.Kind)
	}).Should(gomega.Succeed())
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

// expectIdle waits until nothing already on its way brings a reconcile of
// parent: it nudges parent and waits until a reconcile of parent that
// started after the nudge was sent ended (the controller's queue folds
// the events of a key into one reconcile, so that every event before the
// nudge was handled by then, but for one whose reconcile started in the
// moment the nudge took to reach the manager), and until no reconcile its
// controller asked to run later (managerLog.requeuePending: for a child
// it still vouches for, apply.CreatedChildren, for a status write put off)
// is still due. A converged parent's reconcile writes nothing, so none
// follows: from then on only the case's own act brings the next
// reconcile, which the cases that show one does (a child deleted or
// changed, an Invalid refusal retried) rely on. A reconcile on its way
// anyway would pass them without it.
func (c *conformance) expectIdle(g *gomega.WithT, parent client.Object) {
	key := client.ObjectKeyFromObject(parent)
	since := time.Now()
	g.Expect(Nudge(context.Background(), c.client(), parent.DeepCopyObject().(client.Object))).To(gomega.Succeed())
	g.Eventually(func() bool { return c.log.reconciledSince(c.Controller, key, since) }).Should(gomega.BeTrue(),
		"%s reconciled since the nudge", key)
	g.Eventually(func() bool { return c.log.requeuePending(c.Controller, key) }).Should(gomega.BeFalse(),
		"a reconcile of %s its controller asked for is still due", key)
}

// conflict: a foreign object in the child's place before the parent exists.
func (c *conformance) conflict(t *testing.T, ch ConformanceChild) {
	g := NewG(t)
	ctx := context.Background()
	parent := c.New(parentName(CaseConflict, ch))
	key, _ := ch.Child(parent)
	foreign := ch.Foreign(key)
	g.Expect(c.client().Create(ctx, foreign, client.FieldOwner(conformanceForeignManager))).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.client().Delete(context.Background(), foreign) })
	parent = c.create(t, g, parent.GetName())
	if ch.Bring != nil {
		ch.Bring(g, parent)
	}

	ready := c.expectBlocked(g, parent, controllers.ReasonResourceConflict, nil)
	g.Expect(ready.Message).To(gomega.ContainSubstring(ch.Kind+" "+key.String()), "Ready names the object in the way")
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
	c.expectControlled(g, ch, parent)
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

// childWrite is how a refusal case makes the operator write a child, and
// how it tells whether the write was made.
type childWrite struct {
	// op is the write's operation, the one the admission policy refuses.
	op admissionregistrationv1.OperationType
	// ask makes the operator write the child.
	ask func(g *gomega.WithT, parent client.Object)
	// unchanged asserts the write was not made; made that it was.
	unchanged, made func(g gomega.Gomega, parent client.Object)
}

// writeOf returns how ch is made written: an update through a new spec
// (Change), else an update that puts back a field another field manager
// changed (Tamper), else, for a child the operator only ever creates,
// its creation again after it was deleted.
func (c *conformance) writeOf(ch ConformanceChild) childWrite {
	ctx := context.Background()
	// before is the child as the operator's refused write finds it.
	var before client.Object
	sameVersion := func(g gomega.Gomega, parent client.Object) {
		g.Expect(c.getChild(g, ch, parent).GetResourceVersion()).To(gomega.Equal(before.GetResourceVersion()),
			"the %s is unchanged", ch.Kind)
	}
	switch {
	case ch.Change != nil:
		return childWrite{op: admissionregistrationv1.Update,
			ask: func(g *gomega.WithT, parent client.Object) {
				before = c.getChild(g, ch, parent)
				g.Eventually(func(g gomega.Gomega) {
					live := c.get(g, parent)
					ch.Change(live)
					g.Expect(c.client().Update(ctx, live)).To(gomega.Succeed())
				}).Should(gomega.Succeed())
			},
			unchanged: sameVersion,
			made:      func(g gomega.Gomega, parent client.Object) { ch.Changed(g, c.getChild(g, ch, parent)) },
		}
	case ch.Tamper != nil:
		var want string
		return childWrite{op: admissionregistrationv1.Update,
			ask: func(g *gomega.WithT, parent client.Object) {
				g.Eventually(func(g gomega.Gomega) {
					child := c.getChild(g, ch, parent)
					want = ch.Field(child)
					ch.Tamper(child)
					g.Expect(c.client().Update(ctx, child, client.FieldOwner(conformanceOtherManager))).To(gomega.Succeed())
					before = child
				}).Should(gomega.Succeed())
			},
			unchanged: sameVersion,
			made: func(g gomega.Gomega, parent client.Object) {
				g.Expect(ch.Field(c.getChild(g, ch, parent))).To(gomega.Equal(want))
			},
		}
	}
	return childWrite{op: admissionregistrationv1.Create,
		ask: func(g *gomega.WithT, parent client.Object) {
			before = c.getChild(g, ch, parent)
			g.Expect(c.client().Delete(ctx, before)).To(gomega.Succeed())
		},
		unchanged: func(g gomega.Gomega, parent client.Object) {
			key, child := ch.Child(parent)
			err := c.client().Get(ctx, key, child)
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "the %s is not made again: %v", ch.Kind, err)
		},
		made: func(g gomega.Gomega, parent client.Object) {
			child := c.getChild(g, ch, parent)
			g.Expect(child.GetUID()).NotTo(gomega.Equal(before.GetUID()), "a new %s", ch.Kind)
			g.Expect(apply.IsControlledBy(child, parent.GetUID())).To(gomega.BeTrue())
		},
	}
}

// refused: the API server refuses the converged child's write (writeOf)
// with reason, Forbidden or Invalid. Both make the parent Ready=False
// ApplyFailed, Stalled, with the API server's message, what the status
// reports of the child still reported. Policy tells how each is retried:
// a Forbidden refusal is the reconcile's error, retried with backoff, so
// that the write is made once the policy is gone; an Invalid one is not
// (only a new spec changes that), so that the write waits for the next
// event, here a nudge of the parent.
func (c *conformance) refused(t *testing.T, ch ConformanceChild, reason metav1.StatusReason) {
	g := NewG(t)
	ctx := context.Background()
	kase := CaseRefusedWrite
	if reason == metav1.StatusReasonInvalid {
		kase = CaseInvalid
	}
	parent := c.converged(t, g, parentName(kase, ch))
	key := client.ObjectKeyFromObject(parent)
	var reported func(gomega.Gomega, client.Object)
	if ch.Reported != nil {
		g.Eventually(func(g gomega.Gomega) { ch.Reported(g, c.get(g, parent)) }).Should(gomega.Succeed(),
			"the %s is reported before the refusal", ch.Kind)
		reported = ch.Reported
	}
	write := c.writeOf(ch)
	remove := c.freeze(t, g, ch, parent, write.op, reason)
	logged := c.log.mark()
	errorsBefore, err := ReconcileErrorTotal(c.Controller)
	g.Expect(err).NotTo(gomega.HaveOccurred())

	write.ask(g, parent)
	ready := c.expectBlocked(g, parent, controllers.ReasonApplyFailed, reported)
	g.Expect(ready.Message).To(gomega.ContainSubstring(conformancePolicyMessage), "Ready has the API server's message")
	write.unchanged(g, parent)

	if kase == CaseRefusedWrite {
		// Returned as the reconcile's error: retried with backoff, so that
		// the write is made once the policy is gone, with no other event.
		g.Eventually(func() []string { return c.log.about(logged, key) }).ShouldNot(gomega.BeEmpty(),
			"the refusal is the reconcile's error")
		remove()
		g.Eventually(func(g gomega.Gomega) { write.made(g, parent) }).Should(gomega.Succeed())
		c.expectReady(g, parent)
		return
	}
	// Not retried, with backoff or otherwise, until an event: no reconcile
	// error (expectIdle's nudge, while the policy holds, is refused as
	// well), and the policy gone, the write is still not made...
	c.expectNoReconcileError(g, key, logged, errorsBefore)
	c.expectIdle(g, parent)
	remove()
	g.Consistently(func(g gomega.Gomega) { write.unchanged(g, parent) }, conformanceNoRetry).Should(gomega.Succeed(),
		"an Invalid refusal is not retried before the next event")
	c.expectNoReconcileError(g, key, logged, errorsBefore)
	// ...until the next event of the parent.
	mark := c.Suite.Reconciles.Mark()
	g.Expect(Nudge(ctx, c.client(), parent)).To(gomega.Succeed())
	c.Suite.ExpectReconciled(g, mark, c.Controller, key)
	g.Eventually(func(g gomega.Gomega) { write.made(g, parent) }).Should(gomega.Succeed())
	c.expectReady(g, parent)
}

// freeze makes the API server refuse the operator's writes (those of its
// field manager, apply.FieldOwner) of operation op of parent's child ch
// with conformancePolicyMessage and reason (a ValidatingAdmissionPolicy,
// as a policy engine would), until the returned func or the end of the
// test removes it; the func waits until the policy is no longer in force.
// Someone else's writes of the child go through.
func (c *conformance) freeze(t *testing.T, g *gomega.WithT, ch ConformanceChild, parent client.Object,
	op admissionregistrationv1.OperationType, reason metav1.StatusReason) func() {
	t.Helper()
	ctx := context.Background()
	key, child := ch.Child(parent)
	gvk, err := c.client().GroupVersionKindFor(child)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	mapping, err := c.client().RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	name := strings.ToLower("conformance-" + key.Namespace + "-" + key.Name + "-" + ch.Kind)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					ResourceNames: []string{key.Name},
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{op},
						Rule: admissionregistrationv1.Rule{
							APIGroups:   []string{gvk.Group},
							APIVersions: []string{gvk.Version},
							Resources:   []string{mapping.Resource.Resource},
						},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "operator",
				Expression: "has(request.options.fieldManager) && request.options.fieldManager == '" + apply.FieldOwner + "'",
			}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "false",
				Message:    conformancePolicyMessage,
				Reason:     &reason,
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
	// A dry run of the operator's write: an update of the child, or a
	// create of it (an AlreadyExists is not refused).
	template := c.getChild(g, ch, parent)
	template.SetResourceVersion("")
	template.SetUID("")
	template.SetManagedFields(nil)
	template.SetCreationTimestamp(metav1.Time{})
	probe := func(g gomega.Gomega) error {
		if op == admissionregistrationv1.Create {
			err := c.client().Create(ctx, template.DeepCopyObject().(client.Object), client.DryRunAll,
				client.FieldOwner(apply.FieldOwner))
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		}
		probe := c.getChild(g, ch, parent)
		annotations := probe.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["conformance.sunstrider.cn/probe"] = "1"
		probe.SetAnnotations(annotations)
		return c.client().Update(ctx, probe, client.DryRunAll, client.FieldOwner(apply.FieldOwner))
	}
	g.Expect(c.client().Create(ctx, policy)).To(gomega.Succeed())
	g.Expect(c.client().Create(ctx, binding)).To(gomega.Succeed())
	deleteBoth := sync.OnceFunc(func() {
		g.Expect(client.IgnoreNotFound(c.client().Delete(ctx, binding))).To(gomega.Succeed())
		g.Expect(client.IgnoreNotFound(c.client().Delete(ctx, policy))).To(gomega.Succeed())
	})
	t.Cleanup(deleteBoth)
	g.Eventually(func(g gomega.Gomega) {
		err := probe(g)
		g.Expect(apierrors.ReasonForError(err)).To(gomega.Equal(reason), "policy not in force yet: %v", err)
		g.Expect(err.Error()).To(gomega.ContainSubstring(conformancePolicyMessage))
	}).Should(gomega.Succeed(), "the policy is in force")
	return func() {
		deleteBoth()
		g.Eventually(probe).Should(gomega.Succeed(), "the policy is no longer in force")
	}
}

// childDeleted: the child deleted behind the operator's back is made
// again.
func (c *conformance) childDeleted(t *testing.T, ch ConformanceChild) {
	g := NewG(t)
	ctx := context.Background()
	parent := c.converged(t, g, parentName(CaseChildDeleted, ch))
	c.expectIdle(g, parent)
	first := c.getChild(g, ch, parent)
	g.Expect(c.client().Delete(ctx, first)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		child := c.getChild(g, ch, parent)
		g.Expect(child.GetUID()).NotTo(gomega.Equal(first.GetUID()), "a new %s", ch.Kind)
		g.Expect(apply.IsControlledBy(child, parent.GetUID())).To(gomega.BeTrue())
	}).Should(gomega.Succeed(), "the deleted %s is made again", ch.Kind)
}

// childChanged: a field the operator sets, changed behind its back by
// another field manager, is put back.
func (c *conformance) childChanged(t *testing.T, ch ConformanceChild) {
	g := NewG(t)
	ctx := context.Background()
	parent := c.converged(t, g, parentName(CaseChildChanged, ch))
	c.expectIdle(g, parent)
	var want string
	g.Eventually(func(g gomega.Gomega) {
		child := c.getChild(g, ch, parent)
		want = ch.Field(child)
		ch.Tamper(child)
		g.Expect(c.client().Update(ctx, child, client.FieldOwner(conformanceOtherManager))).To(gomega.Succeed())
		g.Expect(ch.Field(child)).NotTo(gomega.Equal(want), "the field was changed")
	}).Should(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(ch.Field(c.getChild(g, ch, parent))).To(gomega.Equal(want))
	}).Should(gomega.Succeed(), "the changed field is put back")
}
