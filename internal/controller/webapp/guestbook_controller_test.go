/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package webapp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
)

func TestGuestbookCreatesChildren(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-children", ns, 2, "gb-conf")
	createGuestbook(t, g, gb)

	// The missing ConfigMap is created with defaults, owned by the Guestbook.
	cm := &corev1.ConfigMap{}
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gb-conf"}, cm)
	}).Should(Succeed())
	g.Expect(apply.IsControlledBy(cm, gb.UID)).To(BeTrue())
	g.Expect(cm.Data).To(Equal(defaultConfig))
	// The operator's own ConfigMap is cached whole.
	g.Eventually(func(g Gomega) {
		cached := &corev1.ConfigMap{}
		g.Expect(suite.Cache.Get(ctx, client.ObjectKeyFromObject(cm), cached)).To(Succeed())
		g.Expect(cached.Data).To(Equal(defaultConfig))
	}).Should(Succeed())

	sts := waitForStatefulSet(g, ns, gb.Name)
	g.Expect(apply.IsControlledBy(sts, gb.UID)).To(BeTrue())
	g.Expect(*sts.Spec.Replicas).To(Equal(int32(2)))
	c := sts.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal(testImage))
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: EnvAlias, Value: "Phone"}))
	g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue(AnnotationConfigChecksum, configChecksum(defaultConfig, nil)))

	svc := &corev1.Service{}
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: gb.Name}, svc)
	}).Should(Succeed())
	g.Expect(apply.IsControlledBy(svc, gb.UID)).To(BeTrue())
	g.Expect(svc.Spec.Selector).To(HaveKeyWithValue(LabelRole, RoleActive))
	g.Expect(svc.Spec.Selector).To(HaveKeyWithValue(LabelGuestbook, gb.Name))

	g.Eventually(func(g Gomega) {
		got := getGuestbook(g, gb.Name)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		ready := condition(g, gb.Name, webappv1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(webappv1.ReasonInstancesNotReady))
		available := condition(g, gb.Name, webappv1.ConditionAvailable)
		g.Expect(available.Reason).To(Equal(webappv1.ReasonNoReadyInstance))
	}).Should(Succeed())

	// The created ConfigMap is the user's to edit: the change rolls the
	// instances and is not reverted. (A merge patch: the copy read above
	// may predate the operator's rewrite of the created ConfigMap's
	// managedFields.)
	edit := client.MergeFrom(cm.DeepCopy())
	cm.Data = map[string]string{"guestbook.conf": "title=Edited\n"}
	g.Expect(k8sClient.Patch(ctx, cm, edit)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue(AnnotationConfigChecksum, configChecksum(cm.Data, nil)))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) {
		got := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
		g.Expect(got.Data).To(Equal(cm.Data))
	}).Should(Succeed())
}

func TestGuestbookUsesForeignConfigMapReadOnly(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "their-conf", Namespace: ns},
		Data:       map[string]string{"guestbook.conf": "title=Theirs\n"},
	}
	g.Expect(k8sClient.Create(ctx, cm)).To(Succeed())
	gb := newGuestbook("gb-foreign", ns, 1, "their-conf")
	createGuestbook(t, g, gb)

	sts := waitForStatefulSet(g, ns, gb.Name)
	g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue(AnnotationConfigChecksum, configChecksum(cm.Data, nil)))
	g.Eventually(func(g Gomega) {
		g.Expect(getGuestbook(g, gb.Name).Status.Conditions).NotTo(BeEmpty())
	}).Should(Succeed())
	// The checksum is of the data the API server holds: the manager's
	// cache holds this ConfigMap without it (machinery.ConfigMapTransform).
	expectCachedWithoutData(g, cm)

	expectUntouched := func(g Gomega, want *corev1.ConfigMap) {
		got := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(want), got)).To(Succeed())
		g.Expect(got.ResourceVersion).To(Equal(want.ResourceVersion))
		g.Expect(got.OwnerReferences).To(BeEmpty())
		for _, mf := range got.ManagedFields {
			g.Expect(mf.Manager).NotTo(Equal(apply.FieldOwner))
		}
	}
	g.Consistently(func(g Gomega) { expectUntouched(g, cm) }).Should(Succeed())

	// A change of the foreign data rolls the instances.
	cm.Data["guestbook.conf"] = "title=Theirs, edited\n"
	g.Expect(k8sClient.Update(ctx, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue(AnnotationConfigChecksum, configChecksum(cm.Data, nil)))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) { expectUntouched(g, cm) }).Should(Succeed())
	expectCachedWithoutData(g, cm)
}

// expectCachedWithoutData waits until the manager's cache holds cm at its
// resourceVersion, and expects it there without data.
func expectCachedWithoutData(g *WithT, cm *corev1.ConfigMap) {
	cached := &corev1.ConfigMap{}
	g.Eventually(func(g Gomega) {
		g.Expect(suite.Cache.Get(context.Background(), client.ObjectKeyFromObject(cm), cached)).To(Succeed())
		g.Expect(cached.ResourceVersion).To(Equal(cm.ResourceVersion))
	}).Should(Succeed())
	g.Expect(cached.UID).To(Equal(cm.UID))
	g.Expect(cached.Data).To(BeNil())
	g.Expect(cached.BinaryData).To(BeNil())
}

func TestGuestbookScales(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-scale", ns, 2, "scale-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	g.Expect(*sts.Spec.Replicas).To(Equal(int32(2)))

	patch := client.MergeFrom(gb.DeepCopy())
	gb.Spec.Size = 4
	g.Expect(k8sClient.Patch(ctx, gb, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		g.Expect(*sts.Spec.Replicas).To(Equal(int32(4)))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := getGuestbook(g, gb.Name)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Message).To(ContainSubstring("of 4 instances"))
	}).Should(Succeed())
}

func TestGuestbookElectionAndFailover(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-elect", ns, 3, "elect-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	mostActives := watchMostActives(t, g, ns, gb.Name)
	createPods(g, sts, 0, 1, 2)

	// No instance is ready: all standby, none active.
	expectRoles(g, ns, gb.Name, "", "gb-elect-0", "gb-elect-1", "gb-elect-2")
	g.Expect(condition(g, gb.Name, webappv1.ConditionAvailable).Status).To(Equal(metav1.ConditionFalse))

	// The first ready instance becomes active.
	setReady(g, ns, "gb-elect-1", true)
	expectRoles(g, ns, gb.Name, "gb-elect-1", "gb-elect-0", "gb-elect-2")
	g.Eventually(func(g Gomega) {
		c := condition(g, gb.Name, webappv1.ConditionAvailable)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("gb-elect-1"))
	}).Should(Succeed())

	// More ready instances do not move the active one.
	setReady(g, ns, "gb-elect-0", true)
	setReady(g, ns, "gb-elect-2", true)
	g.Eventually(func(g Gomega) {
		got := getGuestbook(g, gb.Name)
		g.Expect(got.Status.ReadyReplicas).To(Equal(int32(3)))
		c := condition(g, gb.Name, webappv1.ConditionReady)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(webappv1.ReasonInstancesReady))
	}).Should(Succeed())
	expectRoles(g, ns, gb.Name, "gb-elect-1", "gb-elect-0", "gb-elect-2")

	// The active instance stops being ready: the lowest ready standby is
	// promoted.
	setReady(g, ns, "gb-elect-1", false)
	expectRoles(g, ns, gb.Name, "gb-elect-0", "gb-elect-1", "gb-elect-2")
	g.Eventually(func(g Gomega) {
		c := condition(g, gb.Name, webappv1.ConditionReady)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(webappv1.ReasonInstancesNotReady))
		g.Expect(condition(g, gb.Name, webappv1.ConditionAvailable).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	// The active Pod disappears: the next ready standby is promoted.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gb-elect-0"}}
	g.Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	expectRoles(g, ns, gb.Name, "gb-elect-2", "gb-elect-1")

	// The instance that failed recovers: it stays standby.
	setReady(g, ns, "gb-elect-1", true)
	g.Eventually(func(g Gomega) {
		g.Expect(getGuestbook(g, gb.Name).Status.ReadyReplicas).To(Equal(int32(2)))
	}).Should(Succeed())
	expectRoles(g, ns, gb.Name, "gb-elect-2", "gb-elect-1")

	// No instance is ready any more: none is active.
	setReady(g, ns, "gb-elect-1", false)
	setReady(g, ns, "gb-elect-2", false)
	expectRoles(g, ns, gb.Name, "", "gb-elect-1", "gb-elect-2")
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, gb.Name, webappv1.ConditionAvailable).Reason).To(Equal(webappv1.ReasonNoReadyInstance))
	}).Should(Succeed())

	// Never two actives at once, and one event per promotion (gb-elect-1,
	// gb-elect-0, gb-elect-2): one Event for each Pod promoted, no series.
	g.Expect(mostActives()).To(Equal(1))
	testutil.ExpectEmissions(g, suite.Writes, func(g Gomega) []eventsv1.Event { return eventsFor(g, gb.Name, "Promoted") },
		testutil.ByRelated, map[string]int32{"gb-elect-1": 1, "gb-elect-0": 1, "gb-elect-2": 1})
}

func TestGuestbookWaitsForMissingNamespace(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := "gb-later"
	gb := newGuestbook("gb-later", ns, 1, "later-conf")
	createGuestbook(t, g, gb)

	g.Eventually(func(g Gomega) {
		for _, ct := range []string{webappv1.ConditionReady, webappv1.ConditionAvailable} {
			c := condition(g, gb.Name, ct)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(webappv1.ReasonNamespaceNotFound))
			g.Expect(c.Message).To(ContainSubstring(ns))
		}
	}).Should(Succeed())

	g.Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	waitForStatefulSet(g, ns, gb.Name)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Reason).To(Equal(webappv1.ReasonInstancesNotReady))
	}).Should(Succeed())
}

func TestGuestbookLeavesForeignStatefulSetAlone(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	theirs := testutil.ForeignStatefulSet(ns, "gb-taken")
	g.Expect(k8sClient.Create(ctx, theirs)).To(Succeed())
	gb := newGuestbook("gb-taken", ns, 2, "taken-conf")
	createGuestbook(t, g, gb)

	g.Eventually(func(g Gomega) {
		c := condition(g, gb.Name, webappv1.ConditionReady)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(webappv1.ReasonResourceConflict))
		g.Expect(c.Message).To(ContainSubstring("StatefulSet " + ns + "/gb-taken"))
	}).Should(Succeed())
	// Left alone, also by a reconcile after the conflict was reported (an
	// ignored change of the Guestbook).
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, gb)).To(Succeed())
	suite.ExpectReconciled(g, mark, guestbookController, client.ObjectKeyFromObject(gb))
	g.Consistently(func(g Gomega) {
		got := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(theirs), got)).To(Succeed())
		g.Expect(got.ResourceVersion).To(Equal(theirs.ResourceVersion))
		g.Expect(got.OwnerReferences).To(BeEmpty())
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: gb.Name}, &corev1.Service{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing is made past the conflict")
	}).Should(Succeed())
	// One Warning for the transition, not one per reconcile: one Event, no
	// series (a repeat on an unchanged Guestbook would be one).
	expectEmittedOnce(g, gb.Name, webappv1.ReasonResourceConflict)
	g.Expect(eventsFor(g, gb.Name, webappv1.ReasonResourceConflict)[0].Type).To(Equal(corev1.EventTypeWarning))
}

func TestGuestbookSchemaRejectsInvalidSpecs(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*webappv1.Guestbook)
		field  string
	}{
		{name: "size 0", mutate: func(gb *webappv1.Guestbook) { gb.Spec.Size = 0 }, field: "spec.size"},
		{name: "size 11", mutate: func(gb *webappv1.Guestbook) { gb.Spec.Size = 11 }, field: "spec.size"},
		{name: "unknown alias", mutate: func(gb *webappv1.Guestbook) { gb.Spec.Type = "Email" }, field: "spec.alias"},
		{name: "configMapName of 16 characters", mutate: func(gb *webappv1.Guestbook) { gb.Spec.ConfigMapName = strings.Repeat("c", 16) }, field: "spec.configMapName"},
		{name: "empty configMapName", mutate: func(gb *webappv1.Guestbook) { gb.Spec.ConfigMapName = "" }, field: "spec.configMapName"},
		{name: "invalid namespace", mutate: func(gb *webappv1.Guestbook) { gb.Spec.Namespace = "Not_A_Label" }, field: "spec.namespace"},
		{name: "name too long for the StatefulSet", mutate: func(gb *webappv1.Guestbook) { gb.Name = strings.Repeat("n", 53) }, field: "metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newG(t)
			gb := newGuestbook("gb-invalid", "default", 3, "conf")
			tt.mutate(gb)
			err := k8sClient.Create(context.Background(), gb, client.DryRunAll)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.field))
		})
	}

	t.Run("namespace is immutable", func(t *testing.T) {
		g := newG(t)
		gb := newGuestbook("gb-immutable", "", 1, "conf")
		createGuestbook(t, g, gb)
		g.Expect(gb.Spec.Namespace).To(Equal(webappv1.DefaultNamespace), "defaulted by the schema")
		gb.Spec.Namespace = "elsewhere"
		err := k8sClient.Update(context.Background(), gb)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.namespace"))
	})
}

// guestbookController is the controller's name in logs and metrics.
const guestbookController = ControllerName

// guestbookMakesNoWritesAtSteadyState checks the controller reconciles
// a converged Guestbook again (after a change it ignores) without an API
// write, and a restarted manager reconciles it without a write either.
// Only this Guestbook's writes are counted: its own (status, Events) and
// those in its namespace. It runs inside TestGuestbookConformance/Restart
// (testutil.ConformanceKind SteadyState), whose one manager restart it
// shares.
func guestbookMakesNoWritesAtSteadyState(t *testing.T) testutil.SteadyState {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-quiet", ns, 2, "quiet-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	createPods(g, sts, 0, 1)
	setReady(g, ns, "gb-quiet-0", true)
	setReady(g, ns, "gb-quiet-1", true)
	expectRoles(g, ns, gb.Name, "gb-quiet-0", "gb-quiet-1")
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
	scopes := []testutil.Scope{testutil.InNamespace(ns), testutil.ClusterObject("guestbooks", "Guestbook", gb.Name)}
	key := client.ObjectKeyFromObject(gb)

	mine := writes.In(scopes...)
	g.Expect(mine.Total()).NotTo(BeZero(), "the counter sees the manager's writes for %s", gb.Name)
	g.Eventually(mine.Drain).WithPolling(time.Second).Should(BeZero(), "the manager settles")
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, gb)).To(Succeed())
	suite.ExpectQuiet(g, mine, mark, guestbookController, key)

	// A fresh manager (empty caches, every object seen anew) writes nothing
	// for it either (the Restart case checks it).
	return testutil.SteadyState{
		Scopes: scopes,
		Keys:   []client.ObjectKey{key},
		Then: func(t *testing.T) {
			g := newG(t)
			t.Logf("restarted manager: %d reconciles of %s, %d of any Guestbook",
				suite.Reconciles.Count(guestbookController, key), gb.Name, suite.Reconciles.Total(guestbookController))

			// And it is alive: a failover still happens.
			setReady(g, ns, "gb-quiet-0", false)
			expectRoles(g, ns, gb.Name, "gb-quiet-1", "gb-quiet-0")
		},
	}
}

func TestGuestbookSampleIsAccepted(t *testing.T) {
	g := newG(t)
	root, err := testutil.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	f, err := os.Open(filepath.Join(root, "config", "samples", "webapp_v1_guestbook.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	sample := &webappv1.Guestbook{}
	g.Expect(yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(sample)).To(Succeed())
	g.Expect(sample.Spec.Size).To(Equal(int32(3)))
	g.Expect(sample.Spec.ConfigMapName).To(Equal("guestbook-conf"))
	g.Expect(sample.Spec.Type).To(Equal(webappv1.AliasPhone))
	g.Expect(k8sClient.Create(context.Background(), sample, client.DryRunAll)).To(Succeed())
}

// A Guestbook blocked by a foreign StatefulSet recovers once that is gone:
// the production cache never holds the foreign object, so only the
// conflict recheck can notice (it never did before the recheck existed).
func TestGuestbookRecoversWhenTheForeignStatefulSetIsDeleted(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	theirs := testutil.ForeignStatefulSet(ns, "gb-freed")
	g.Expect(k8sClient.Create(ctx, theirs)).To(Succeed())
	gb := newGuestbook("gb-freed", ns, 1, "freed-conf")
	createGuestbook(t, g, gb)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Reason).To(Equal(webappv1.ReasonResourceConflict))
	}).Should(Succeed())

	g.Expect(k8sClient.Delete(ctx, theirs)).To(Succeed())
	sts := waitForStatefulSetRollingOut(g, ns, gb.Name)
	g.Eventually(func(g Gomega) {
		got := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), got)).To(Succeed())
		g.Expect(apply.IsControlledBy(got, getGuestbook(g, gb.Name).UID)).To(BeTrue())
	}).Should(Succeed())
}

// Ready follows the StatefulSet's rollout: until its controller reports
// the current template everywhere, the Guestbook is RollingOut (kstatus
// InProgress), whatever its Pods say.
func TestGuestbookIsRollingOutUntilTheStatefulSetHasRolledOut(t *testing.T) {
	g := newG(t)
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-rolling", ns, 1, "rolling-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSetRollingOut(g, ns, gb.Name)
	createPods(g, sts, 0)
	setReady(g, ns, sts.Name+"-0", true)
	g.Eventually(func(g Gomega) {
		c := condition(g, gb.Name, webappv1.ConditionReady)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(webappv1.ReasonRollingOut))
	}).Should(Succeed())

	markRolledOut(g, sts)
	g.Eventually(func(g Gomega) {
		got := getGuestbook(g, gb.Name)
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, webappv1.ConditionReady)).To(BeTrue())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	}).Should(Succeed())
}

// Changes other field managers make inside the Guestbook's children are put
// back: a widened Service selector (an atomic map) and an env var added to
// the StatefulSet's instances; the restart annotation stays.
func TestGuestbookChildrenChangedByOthersAreRestored(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-drift", ns, 1, "drift-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	svc := &corev1.Service{}
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: gb.Name}, svc)
	}).Should(Succeed())
	wantSelector := svc.Spec.Selector
	wantEnv := sts.Spec.Template.Spec.Containers[0].Env

	g.Expect(k8sClient.Patch(ctx, svc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"selector":{"hijack":"yes"}}}`)),
		client.FieldOwner("kubectl-patch"))).To(Succeed())
	g.Expect(k8sClient.Patch(ctx, sts, client.RawPatch(types.JSONPatchType, []byte(
		`[{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"INJECTED","value":"1"}},`+
			`{"op":"add","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt","value":"now"}]`)),
		client.FieldOwner("kubectl-patch"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &corev1.Service{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), got)).To(Succeed())
		g.Expect(got.Spec.Selector).To(Equal(wantSelector))
		gotSts := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), gotSts)).To(Succeed())
		g.Expect(gotSts.Spec.Template.Spec.Containers[0].Env).To(Equal(wantEnv))
		g.Expect(gotSts.Spec.Template.Annotations).To(HaveKeyWithValue("kubectl.kubernetes.io/restartedAt", "now"))
	}).Should(Succeed())
}
