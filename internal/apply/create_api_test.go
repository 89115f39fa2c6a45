package apply_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"sunstrider.cn/operator/internal/apply"
)

// parentUID is the UID of the fake parent of the children these tests
// create (envtest runs no garbage collector).
const parentUID = types.UID("00000000-0000-0000-0000-00000000cafe")

// TestWriteCreates checks Applier.Write of a child it saw absent, on a real
// API server: it creates the child and never takes over an object of the
// child's name the cache did not hold (a conflict, read from the API
// server; its own child is updated as read); the child is created by a
// server-side apply (one Apply entry of the operator, with the fields an
// apply owns), so that a later apply removes a field the operator stops
// setting, in one request.
func TestWriteCreates(t *testing.T) {
	base := apiServer(t)
	ctx := t.Context()
	const ns = "write-creates"
	if err := base.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	applier := &apply.Applier{Client: base, APIReader: base}

	t.Run("an object created after the read is not taken over", func(t *testing.T) {
		g := NewWithT(t)
		key := client.ObjectKey{Namespace: ns, Name: "settings"}
		// A user creates a ConfigMap of the child's name after the
		// operator's read found none.
		foreign := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns},
			Data:       map[string]string{"user": "mine"},
		}
		g.Expect(base.Create(ctx, foreign, client.FieldOwner("kubectl-create"))).To(Succeed())

		out, err := applier.Write(ctx, ownedConfigMap(key, map[string]string{"operator": "x"}), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Conflict).To(Equal("ConfigMap "+key.String()), "the write must be refused as a conflict: %+v", out)
		g.Expect(out.Foreign).NotTo(BeNil())
		g.Expect(out.Foreign.GetUID()).To(Equal(foreign.UID), "the conflict names the user's ConfigMap")
		g.Expect(out.Stale).To(BeFalse())
		g.Expect(out.Action).To(Equal(apply.Unchanged))
		g.Expect(out.Rejected).NotTo(HaveOccurred())
		g.Expect(out.Live).To(BeNil())

		after := &corev1.ConfigMap{}
		g.Expect(base.Get(ctx, key, after)).To(Succeed())
		g.Expect(after.ResourceVersion).To(Equal(foreign.ResourceVersion), "the user's ConfigMap was written")
		g.Expect(after.OwnerReferences).To(BeEmpty())
		g.Expect(after.Data).To(Equal(map[string]string{"user": "mine"}))
		g.Expect(after.Labels).NotTo(HaveKey(apply.ManagedByLabel))
		g.Expect(after.Annotations).NotTo(HaveKey(apply.HashAnnotation))
		g.Expect(operatorEntries(after)).To(BeEmpty())

		// Read from the API server, it is someone else's object too.
		out, err = applier.Ensure(ctx, parentUID, ownedConfigMap(key, map[string]string{"operator": "x"}), &corev1.ConfigMap{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Conflict).To(Equal("ConfigMap " + key.String()))
	})

	t.Run("its own child the cache did not hold is read and left as it is", func(t *testing.T) {
		g := NewWithT(t)
		key := client.ObjectKey{Namespace: ns, Name: "lagging"}
		out, err := applier.Write(ctx, ownedConfigMap(key, map[string]string{"a": "1"}), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Action).To(Equal(apply.Created))
		before := &corev1.ConfigMap{}
		g.Expect(base.Get(ctx, key, before)).To(Succeed())

		// A second reconcile whose cache does not hold the child yet.
		out, err = applier.Write(ctx, ownedConfigMap(key, map[string]string{"a": "1"}), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Action).To(Equal(apply.Unchanged), "%+v", out)
		g.Expect(out.Stale).To(BeFalse())
		g.Expect(out.Conflict).To(BeEmpty())
		g.Expect(out.Live.GetUID()).To(Equal(before.UID))
		after := &corev1.ConfigMap{}
		g.Expect(base.Get(ctx, key, after)).To(Succeed())
		g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing was written")
	})

	t.Run("created with an apply's managed fields, a dropped key is removed", func(t *testing.T) {
		g := NewWithT(t)
		key := client.ObjectKey{Namespace: ns, Name: "pruned"}
		out, err := applier.Write(ctx, ownedConfigMap(key, map[string]string{"a": "1", "b": "2"}), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Action).To(Equal(apply.Created))
		g.Expect(out.Stale).To(BeFalse())
		g.Expect(out.Rejected).NotTo(HaveOccurred())
		g.Expect(out.Live).To(BeAssignableToTypeOf(&corev1.ConfigMap{}))
		g.Expect(out.Live.(*corev1.ConfigMap).Data).To(Equal(map[string]string{"a": "1", "b": "2"}))
		g.Expect(out.Live.GetUID()).NotTo(BeEmpty(), "Live is the created object")

		created := &corev1.ConfigMap{}
		g.Expect(base.Get(ctx, key, created)).To(Succeed())
		g.Expect(created.ManagedFields).To(HaveLen(1))
		g.Expect(operatorEntries(created)).To(ConsistOf(HaveField("Operation", metav1.ManagedFieldsOperationApply)))
		g.Expect(out.Live.GetResourceVersion()).To(Equal(created.ResourceVersion), "Live is the child as last written")

		out, err = applier.Write(ctx, ownedConfigMap(key, map[string]string{"a": "1"}), cached(g, base, emptyConfigMap, key))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Action).To(Equal(apply.Updated))
		after := &corev1.ConfigMap{}
		g.Expect(base.Get(ctx, key, after)).To(Succeed())
		g.Expect(after.Data).To(Equal(map[string]string{"a": "1"}), "the key the operator stopped setting is removed")
		g.Expect(operatorEntries(after)).To(ConsistOf(HaveField("Operation", metav1.ManagedFieldsOperationApply)))
	})

	t.Run("a created Deployment's fields are an apply's", func(t *testing.T) {
		g := NewWithT(t)
		created := client.ObjectKey{Namespace: ns, Name: "created"}
		out, err := applier.Write(ctx, ownedDeployment(created), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Action).To(Equal(apply.Created))

		// Its twin, made by a plain forced apply (no precondition).
		applied := client.ObjectKey{Namespace: ns, Name: "applied"}
		g.Expect(base.Apply(ctx, client.ApplyConfigurationFromUnstructured(applyBody(g, ownedDeployment(applied))),
			client.FieldOwner(apply.FieldOwner), client.ForceOwnership)).To(Succeed())

		sets := make([]*fieldpath.Set, 0, 2)
		for _, key := range []client.ObjectKey{created, applied} {
			live := &appsv1.Deployment{}
			g.Expect(base.Get(ctx, key, live)).To(Succeed())
			entries := operatorEntries(live)
			g.Expect(entries).To(ConsistOf(HaveField("Operation", metav1.ManagedFieldsOperationApply)), key.Name)
			sets = append(sets, entrySet(g, entries[0]))
		}
		g.Expect(sets[0].Equals(sets[1])).To(BeTrue(),
			"created owns %s\napplied owns %s", sets[0].Difference(sets[1]), sets[1].Difference(sets[0]))
		// Defaults the API server set are owned by no one, as after an apply.
		g.Expect(sets[0].Has(fieldpath.MakePathOrDie("spec", "revisionHistoryLimit"))).To(BeFalse())
	})

	t.Run("a create is one request, a create that finds an object two", func(t *testing.T) {
		g := NewWithT(t)
		var mu sync.Mutex
		var requests []string
		record := func(verb string) {
			mu.Lock()
			defer mu.Unlock()
			requests = append(requests, verb)
		}
		counted := interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				record("get")
				return c.Get(ctx, key, obj, opts...)
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				record("create")
				return c.Create(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				record(patchVerb(patch))
				return c.Patch(ctx, obj, patch, opts...)
			},
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				record("apply")
				return c.Apply(ctx, obj, opts...)
			},
		})
		applier := &apply.Applier{Client: counted, APIReader: counted}
		key := client.ObjectKey{Namespace: ns, Name: "one-request"}
		out, err := applier.Write(ctx, ownedDeployment(key), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Action).To(Equal(apply.Created))
		g.Expect(requests).To(Equal([]string{"apply"}))
		live := &appsv1.Deployment{}
		g.Expect(base.Get(ctx, key, live)).To(Succeed())
		g.Expect(out.Live.GetResourceVersion()).To(Equal(live.ResourceVersion), "Live is the child as written")
		g.Expect(out.Live.GetUID()).To(Equal(live.UID))

		// A user's Deployment of the child's name, which the read did not see.
		requests = nil
		foreign := client.ObjectKey{Namespace: ns, Name: "users"}
		users := ownedDeployment(foreign).(*appsv1.Deployment)
		users.OwnerReferences, users.Labels = nil, nil
		g.Expect(base.Create(ctx, users, client.FieldOwner("kubectl-create"))).To(Succeed())
		out, err = applier.Write(ctx, ownedDeployment(foreign), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Conflict).To(Equal("Deployment " + foreign.String()))
		g.Expect(requests).To(Equal([]string{"apply", "get"}))
		g.Expect(base.Get(ctx, foreign, live)).To(Succeed())
		g.Expect(live.ResourceVersion).To(Equal(users.ResourceVersion), "the user's Deployment was written")
	})
}

// ownedConfigMap is a ConfigMap child at key with data, controlled by the
// fake parent.
func ownedConfigMap(key client.ObjectKey, data map[string]string) client.Object {
	cm := emptyConfigMap().(*corev1.ConfigMap)
	cm.ObjectMeta = ownedMeta(key)
	cm.Data = data
	return cm
}

// emptyConfigMap is an empty ConfigMap with its kind set.
func emptyConfigMap() client.Object {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
}

// ownedDeployment is a Deployment child at key, controlled by the fake
// parent.
func ownedDeployment(key client.ObjectKey) client.Object {
	labels := map[string]string{"app": key.Name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: ownedMeta(key),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
				}}},
			},
		},
	}
}

// ownedMeta is the metadata of a child at key: the operator's label and a
// controller reference to the fake parent.
func ownedMeta(key client.ObjectKey) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: key.Name, Namespace: key.Namespace,
		Labels: map[string]string{apply.ManagedByLabel: apply.ManagedByValue},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps.sunstrider.cn/v1", Kind: "Application", Name: "parent", UID: parentUID,
			Controller: new(true), BlockOwnerDeletion: new(true),
		}},
	}
}

// applyBody is the body of the operator's apply of desired: hashed,
// without status or nulls.
func applyBody(g Gomega, desired client.Object) *unstructured.Unstructured {
	g.Expect(apply.SetHash(desired)).To(Succeed())
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	g.Expect(err).NotTo(HaveOccurred())
	delete(body, "status")
	pruneNulls(body)
	return &unstructured.Unstructured{Object: body}
}

// operatorEntries are obj's managedFields entries of the operator.
func operatorEntries(obj client.Object) []metav1.ManagedFieldsEntry {
	var entries []metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.Manager == apply.FieldOwner {
			entries = append(entries, e)
		}
	}
	return entries
}

// entrySet decodes the fields of entry.
func entrySet(g Gomega, entry metav1.ManagedFieldsEntry) *fieldpath.Set {
	set := &fieldpath.Set{}
	g.Expect(set.FromJSON(bytes.NewReader(entry.FieldsV1.GetRawBytes()))).To(Succeed())
	return set
}

// TestObserveFindsWhatItCreatedBeforeTheCache: a reconcile that follows a
// create before the cache holds the new child (the Service, when the new
// Deployment's event came first) finds the child as the create returned
// it, and writes nothing: no second create, refused, and no read of the
// child from the API server. Without the memory it costs both. Once the
// cache holds the child, the memory is dropped.
func TestObserveFindsWhatItCreatedBeforeTheCache(t *testing.T) {
	base := apiServer(t)
	ctx := t.Context()
	g := NewWithT(t)
	const ns = "created-memory"
	g.Expect(base.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	requests := &requestLog{}
	record, taken := requests.record, requests.taken
	// cacheHolds tells whether the cache has caught up with the API server.
	cacheHolds := false
	cache := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if !cacheHolds {
				return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			record(patchVerb(patch))
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			record("apply")
			return c.Apply(ctx, obj, opts...)
		},
	})
	apiReader := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			record("get")
			return c.Get(ctx, key, obj, opts...)
		},
	})
	ensure := func(created *apply.CreatedChildren, key client.ObjectKey) (*apply.Applier, apply.Outcome) {
		applier := &apply.Applier{Client: cache, APIReader: apiReader, Created: created}
		out, err := applier.Ensure(ctx, parentUID, ownedConfigMap(key, map[string]string{"a": "1"}), &corev1.ConfigMap{})
		g.Expect(err).NotTo(HaveOccurred())
		return applier, out
	}

	created := &apply.CreatedChildren{}
	key := client.ObjectKey{Namespace: ns, Name: "remembered"}
	first, out := ensure(created, key)
	g.Expect(out.Action).To(Equal(apply.Created))
	g.Expect(first.Remembered).To(BeZero())
	g.Expect(taken()).To(Equal([]string{"apply"}))
	g.Expect(created.Len()).To(Equal(1))
	uid := out.Live.GetUID()

	second, out := ensure(created, key)
	g.Expect(out.Action).To(Equal(apply.Unchanged), "%+v", out)
	g.Expect(out.Conflict).To(BeEmpty())
	g.Expect(out.Live.GetUID()).To(Equal(uid), "the child as the create returned it")
	g.Expect(taken()).To(BeEmpty(), "no request")
	g.Expect(second.Remembered).To(BeNumerically(">", 0), "the reconcile is to look again")
	g.Expect(second.Remembered).To(BeNumerically("<=", apply.CreatedTTL))

	// The same lagging cache without the memory: the create is refused, the
	// child read, and found to be the parent's own.
	_, out = ensure(nil, key)
	g.Expect(out.Action).To(Equal(apply.Unchanged), "%+v", out)
	g.Expect(out.Live.GetUID()).To(Equal(uid))
	g.Expect(taken()).To(Equal([]string{"apply", "get"}))

	// A parent of the same name made again, with another UID: the child
	// created for the old one is not vouched for; the create finds it,
	// someone else's.
	const newParent = types.UID("00000000-0000-0000-0000-00000000beef")
	other := ownedConfigMap(key, map[string]string{"a": "1"})
	other.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps.sunstrider.cn/v1", Kind: "Application",
		Name: "parent", UID: newParent, Controller: new(true), BlockOwnerDeletion: new(true)}})
	out, err := (&apply.Applier{Client: cache, APIReader: apiReader, Created: created}).
		Ensure(ctx, newParent, other, &corev1.ConfigMap{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Conflict).To(Equal("ConfigMap "+key.String()), "%+v", out)
	g.Expect(taken()).To(Equal([]string{"apply", "get"}))

	// The cache catches up: the memory goes, and the child is read from it.
	g.Expect(created.Len()).To(Equal(1), "still remembered while the cache lags")
	cacheHolds = true
	_, out = ensure(created, key)
	g.Expect(out.Action).To(Equal(apply.Unchanged))
	g.Expect(taken()).To(BeEmpty())
	g.Expect(created.Len()).To(BeZero(), "forgotten once the cache holds it")
}
