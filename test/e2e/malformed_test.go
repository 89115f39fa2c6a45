//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// malformedNamespace holds the objects of TestMalformedManifestsAreRejected.
const malformedNamespace = "malformed"

// malformed is a manifest the API server must refuse, with the message
// naming the offending field.
type malformed struct {
	name string
	kind schema.GroupVersionKind
	// before is a valid manifest applied first (for updates), none when empty.
	before string
	// manifest is applied with `kubectl apply` (strict field validation).
	manifest string
	// want are substrings of kubectl's error: the field, and the rule.
	want []string
}

var (
	applicationGVK = schema.GroupVersionKind{Group: "apps.sunstrider.cn", Version: "v1", Kind: "Application"}
	guestbookGVK   = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "Guestbook"}
	mcrGVK         = schema.GroupVersionKind{Group: "poc.test.domain", Version: "v1", Kind: "MyCustomResource"}
	drinkGVK       = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Drink"}
)

// app returns an Application manifest named name whose spec is spec
// (indented YAML under `spec:`).
func app(name, spec string) string {
	return fmt.Sprintf("apiVersion: apps.sunstrider.cn/v1\nkind: Application\n"+
		"metadata:\n  name: %s\n  namespace: %s\nspec:\n%s", name, malformedNamespace, spec)
}

// validAppSpec is the spec of config/samples' nginx-sample.
const validAppSpec = `  deployment:
    replicas: 1
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec: {containers: [{name: web, image: "nginx:1.14.2"}]}
  service:
    type: NodePort
    ports: [{port: 80, nodePort: 30081}]
`

// appWith returns validAppSpec with old replaced by repl.
func appWith(old, repl string) string {
	if !strings.Contains(validAppSpec, old) {
		panic("validAppSpec holds no " + old)
	}
	return strings.Replace(validAppSpec, old, repl, 1)
}

func guestbook(name, spec string) string {
	return fmt.Sprintf("apiVersion: webapp.my.domain/v1\nkind: Guestbook\nmetadata:\n  name: %s\nspec:\n%s", name, spec)
}

func mcr(name, spec string) string {
	return fmt.Sprintf("apiVersion: poc.test.domain/v1\nkind: MyCustomResource\n"+
		"metadata:\n  name: %s\n  namespace: %s\n%s", name, malformedNamespace, spec)
}

func drink(version, name, rest string) string {
	return fmt.Sprintf("apiVersion: example.com/%s\nkind: Drink\nmetadata:\n  name: %s\n  namespace: %s\n%s",
		version, name, malformedNamespace, rest)
}

func malformedManifests() []malformed {
	long := strings.Repeat("a", 64)
	hugeAnnotation := strings.Repeat("x", 300*1024)
	labels := &strings.Builder{}
	for i := range 40 {
		fmt.Fprintf(labels, "    k%d: %s\n", i, strings.Repeat("v", 63))
	}
	return []malformed{
		// Application: types, unknown fields, metadata.
		{name: "replicas is a string", kind: applicationGVK,
			manifest: app("m-a1", appWith("replicas: 1", `replicas: "three"`)),
			want:     []string{"spec.deployment.replicas", "int32"}},
		{name: "replicas negative", kind: applicationGVK,
			manifest: app("m-a2", appWith("replicas: 1", "replicas: -1")),
			want:     []string{"spec.deployment.replicas", "greater than or equal to 0"}},
		{name: "replicas beyond int32", kind: applicationGVK,
			manifest: app("m-a3", appWith("replicas: 1", "replicas: 2147483648")),
			want:     []string{"spec.deployment.replicas"}},
		{name: "unknown field in the deployment", kind: applicationGVK,
			manifest: app("m-a4", appWith("replicas: 1", "replicas: 1\n    replicaz: 2")),
			want:     []string{`unknown field "spec.deployment.replicaz"`}},
		{name: "unknown top-level spec field", kind: applicationGVK,
			manifest: app("m-a5", validAppSpec+"  image: nginx\n"),
			want:     []string{`unknown field "spec.image"`}},
		{name: "name of 64 characters", kind: applicationGVK,
			manifest: app(long, validAppSpec),
			want:     []string{"metadata.name", "63"}},
		{name: "unicode name", kind: applicationGVK,
			manifest: app("wéb", validAppSpec),
			want:     []string{"metadata.name", "Invalid value"}},
		{name: "upper-case name", kind: applicationGVK,
			manifest: app("Web", validAppSpec),
			want:     []string{"metadata.name", "Invalid value"}},
		{name: "label value of 64 characters", kind: applicationGVK,
			manifest: strings.Replace(app("m-a9", validAppSpec), "metadata:\n", "metadata:\n  labels:\n    team: "+long+"\n", 1),
			want:     []string{"metadata.labels", "63"}},
		{name: "label key with unicode", kind: applicationGVK,
			manifest: strings.Replace(app("m-a10", validAppSpec), "metadata:\n", "metadata:\n  labels:\n    tëam: a\n", 1),
			want:     []string{"metadata.labels", "Invalid value"}},
		{name: "annotations over 256 KiB", kind: applicationGVK,
			manifest: strings.Replace(app("m-a11", validAppSpec), "metadata:\n",
				"metadata:\n  annotations:\n    note: "+hugeAnnotation+"\n", 1),
			want: []string{"metadata.annotations", "Too long"}},
		{name: "forty long labels and a bad one", kind: applicationGVK,
			manifest: strings.Replace(app("m-a12", validAppSpec), "metadata:\n", "metadata:\n  labels:\n"+labels.String()+
				"    bad/key/x: v\n", 1),
			want: []string{"metadata.labels", "bad/key/x"}},
		// Application: ports.
		{name: "port 70000", kind: applicationGVK,
			manifest: app("m-a13", appWith("port: 80", "port: 70000")),
			want:     []string{"spec.service.ports", "between 1 and 65535"}},
		{name: "port is a string", kind: applicationGVK,
			manifest: app("m-a14", appWith("port: 80", "port: eighty")),
			want:     []string{"ports.port", "int32"}},
		// A nodePort outside the cluster's node port range is not malformed:
		// TestNodePortOutsideTheClusterRangeStallsTheApplication.
		{name: "nodePort not a port number", kind: applicationGVK,
			manifest: app("m-a15", appWith("nodePort: 30081", "nodePort: 70000")),
			want:     []string{"spec.service.ports[0].nodePort", "between 1 and 65535"}},
		{name: "nodePort on a ClusterIP Service", kind: applicationGVK,
			manifest: app("m-a16", appWith("type: NodePort", "type: ClusterIP")),
			want:     []string{"spec.service.ports", "nodePort may only be set when type is NodePort or LoadBalancer"}},
		{name: "duplicate port names", kind: applicationGVK,
			manifest: app("m-a17", appWith("ports: [{port: 80, nodePort: 30081}]",
				"ports: [{name: http, port: 80}, {name: http, port: 81}]")),
			want: []string{"spec.service.ports[1].name", "Duplicate value"}},
		{name: "duplicate port and protocol", kind: applicationGVK,
			manifest: app("m-a18", appWith("ports: [{port: 80, nodePort: 30081}]",
				"ports: [{name: a, port: 80}, {name: b, port: 80}]")),
			want: []string{"spec.service.ports[1]", "Duplicate value"}},
		{name: "two ports without names", kind: applicationGVK,
			manifest: app("m-a19", appWith("ports: [{port: 80, nodePort: 30081}]", "ports: [{port: 80}, {port: 81}]")),
			want:     []string{"spec.service.ports", "every port needs a name when there is more than one"}},
		{name: "unsupported protocol", kind: applicationGVK,
			manifest: app("m-a20", appWith("port: 80,", "port: 80, protocol: ICMP,")),
			want:     []string{"spec.service.ports[0].protocol", "Unsupported value"}},
		// Application: the Pod template.
		{name: "no containers", kind: applicationGVK,
			manifest: app("m-a21", appWith(`containers: [{name: web, image: "nginx:1.14.2"}]`, "containers: []")),
			want:     []string{"spec.deployment.template.spec.containers"}},
		{name: "container without image", kind: applicationGVK,
			manifest: app("m-a22", appWith(`{name: web, image: "nginx:1.14.2"}`, "{name: web}")),
			want:     []string{"spec.deployment.template.spec.containers[0].image", "Required value"}},
		{name: "containers is a map", kind: applicationGVK,
			manifest: app("m-a23", appWith(`[{name: web, image: "nginx:1.14.2"}]`, "{web: nginx}")),
			want:     []string{"spec.deployment.template.spec.containers"}},
		{name: "template labels contradict the selector", kind: applicationGVK,
			manifest: app("m-a24", appWith("metadata: {labels: {app: web}}", "metadata: {labels: {app: other}}")),
			want:     []string{"spec.deployment.template.metadata.labels", "does not match"}},
		{name: "selector changed", kind: applicationGVK,
			before: app("m-a25", validAppSpec),
			manifest: app("m-a25", strings.ReplaceAll(appWith("selector: {matchLabels: {app: web}}",
				"selector: {matchLabels: {app: other}}"), "labels: {app: web}", "labels: {app: other}")),
			want: []string{"spec.deployment.selector", "immutable"}},
		// Guestbook.
		{name: "size 0", kind: guestbookGVK,
			manifest: guestbook("m-g1", "  size: 0\n  configMapName: c\n"),
			want:     []string{"spec.size", "greater than or equal to 1"}},
		{name: "size 11", kind: guestbookGVK,
			manifest: guestbook("m-g2", "  size: 11\n  configMapName: c\n"),
			want:     []string{"spec.size", "less than or equal to 10"}},
		{name: "size is a string", kind: guestbookGVK,
			manifest: guestbook("m-g3", "  size: three\n  configMapName: c\n"),
			want:     []string{"spec.size", "int32"}},
		{name: "unknown alias", kind: guestbookGVK,
			manifest: guestbook("m-g4", "  size: 1\n  configMapName: c\n  alias: Email\n"),
			want:     []string{"spec.alias", "Unsupported value", `"Phone"`}},
		{name: "configMapName of 16 characters", kind: guestbookGVK,
			manifest: guestbook("m-g5", "  size: 1\n  configMapName: a-very-long-name\n"),
			want:     []string{"spec.configMapName", "15"}},
		{name: "configMapName missing", kind: guestbookGVK,
			manifest: guestbook("m-g6", "  size: 1\n"),
			want:     []string{"spec.configMapName", "Required value"}},
		{name: "namespace with unicode", kind: guestbookGVK,
			manifest: guestbook("m-g7", "  size: 1\n  configMapName: c\n  namespace: tëam\n"),
			want:     []string{"spec.namespace", "should match"}},
		{name: "name of 53 characters", kind: guestbookGVK,
			manifest: guestbook(strings.Repeat("g", 53), "  size: 1\n  configMapName: c\n"),
			want:     []string{"metadata.name", "52"}},
		{name: "namespace changed", kind: guestbookGVK,
			before:   guestbook("m-g9", "  size: 1\n  configMapName: c\n  namespace: "+malformedNamespace+"\n"),
			manifest: guestbook("m-g9", "  size: 1\n  configMapName: c\n  namespace: default\n"),
			want:     []string{"spec.namespace", "immutable"}},
		// MyCustomResource.
		{name: "spec missing", kind: mcrGVK,
			manifest: mcr("m-m1", ""),
			want:     []string{"spec", "Required value"}},
		{name: "friend name missing", kind: mcrGVK,
			manifest: mcr("m-m2", "spec: {}\n"),
			want:     []string{"spec.name", "Required value"}},
		{name: "friend name not a Pod name", kind: mcrGVK,
			manifest: mcr("m-m3", "spec: {name: Funny_Joe}\n"),
			want:     []string{"spec.name", "should match"}},
		{name: "friend name of 254 characters", kind: mcrGVK,
			manifest: mcr("m-m4", "spec: {name: "+strings.Repeat("a", 254)+"}\n"),
			want:     []string{"spec.name", "253"}},
		{name: "friend name is a number", kind: mcrGVK,
			manifest: mcr("m-m5", "spec: {name: 42}\n"),
			want:     []string{"spec.name", "string"}},
		// Drink, in its three versions.
		{name: "drink with punctuation", kind: drinkGVK,
			manifest: drink("v1", "m-d1", "spec: {name: bob, drink: \"coffee!\"}\n"),
			want:     []string{"spec.drink", "lowercase words"}},
		{name: "name with a control character", kind: drinkGVK,
			manifest: drink("v1", "m-d2", "spec: {name: \"bob\\u0007\", drink: tea}\n"),
			want:     []string{"spec.name", "control characters"}},
		{name: "v1beta1 size Huge", kind: drinkGVK,
			manifest: drink("v1beta1", "m-d3", "spec: {name: bob, drink: {kind: tea, size: Huge}}\n"),
			want:     []string{"spec.drink.size", "Unsupported value"}},
		{name: "v1alpha1 order without a name", kind: drinkGVK,
			manifest: drink("v1alpha1", "m-d4", "spec: {order: coffee}\n"),
			want:     []string{"spec.order"}},
		{name: "v1 size annotation Huge", kind: drinkGVK,
			manifest: drink("v1", "m-d5",
				"  annotations: {example.com/v1beta1-drink-size: Huge}\nspec: {name: bob, drink: tea}\n"),
			want: []string{"metadata.annotations[example.com/v1beta1-drink-size]", "Unsupported value"}},
		{name: "unknown field sugar", kind: drinkGVK,
			manifest: drink("v1", "m-d6", "spec: {name: bob, drink: tea, sugar: 2}\n"),
			want:     []string{`unknown field "spec.sugar"`}},
		{name: "drink missing", kind: drinkGVK,
			manifest: drink("v1", "m-d7", "spec: {name: bob}\n"),
			want:     []string{"spec.drink", "Required value"}},
	}
}

// TestMalformedManifestsAreRejected applies each malformed manifest and
// expects the API server (schema, CEL or the operator's webhooks) to refuse
// it with a message naming the field, storing and changing nothing.
func TestMalformedManifestsAreRejected(t *testing.T) {
	g := NewWithT(t)
	mustSh(t, nil, kubectl, "create", "namespace", malformedNamespace)
	dumpOnFailure(t, malformedNamespace, "applications", "drinks", "mycustomresources")
	t.Cleanup(func() {
		_, _ = sh(t, nil, kubectl, "delete", "guestbook", "m-g9", "--ignore-not-found", "--wait=false")
		_, _ = sh(t, nil, kubectl, "delete", "namespace", malformedNamespace, "--wait=false")
	})

	cases := malformedManifests()
	g.Expect(len(cases)).To(BeNumerically(">=", 30))
	rejected := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			if c.before != "" {
				mustSh(t, []byte(c.before), kubectl, "apply", "-f", "-")
			}
			before := snapshot(g, c.kind)
			out, err := sh(t, []byte(c.manifest), kubectl, "apply", "-f", "-")
			g.Expect(err).To(HaveOccurred(), "accepted:\n%s", out)
			for _, w := range c.want {
				g.Expect(out).To(ContainSubstring(w))
			}
			g.Expect(snapshot(g, c.kind)).To(Equal(before), "the rejected apply stored or changed something")
			rejected++
		})
	}
	t.Logf("%d of %d malformed manifests rejected with a message naming the field, nothing stored", rejected, len(cases))
	g.Expect(rejected).To(Equal(len(cases)))
}

// snapshot returns, for every object of kind (in malformedNamespace, or
// cluster-wide for Guestbooks), what an apply could change: generation,
// labels, annotations and spec.
func snapshot(g Gomega, kind schema.GroupVersionKind) map[string]string {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
	var opts []client.ListOption
	if kind != guestbookGVK {
		opts = append(opts, client.InNamespace(malformedNamespace))
	}
	g.Expect(admin.List(ctx(), list, opts...)).To(Succeed())
	out := make(map[string]string, len(list.Items))
	for _, item := range list.Items {
		state, err := json.Marshal(map[string]any{
			"generation": item.GetGeneration(), "labels": item.GetLabels(),
			"annotations": item.GetAnnotations(), "spec": item.Object["spec"],
		})
		g.Expect(err).NotTo(HaveOccurred())
		out[item.GetName()] = string(state)
	}
	return out
}

// TestNodePortOutsideTheClusterRangeStallsTheApplication applies an
// Application whose nodePort lies outside the cluster's
// --service-node-port-range (the default 30000-32767 here). Only the API
// server knows that range, so the Application is accepted, its Service is
// refused, and the Application reports it: Ready=False with reason
// ApplyFailed and the API server's message, Stalled=True, which kstatus
// (Flux, kpt, Config Sync) reads as Failed.
func TestNodePortOutsideTheClusterRangeStallsTheApplication(t *testing.T) {
	g := NewWithT(t)
	const namespace = "node-port-range"
	mustSh(t, nil, kubectl, "create", "namespace", namespace)
	dumpOnFailure(t, namespace, "applications", "deployments", "services")
	t.Cleanup(func() { _, _ = sh(t, nil, kubectl, "delete", "namespace", namespace, "--wait=false") })

	manifest := strings.Replace(app("outside", appWith("nodePort: 30081", "nodePort: 20000")),
		"namespace: "+malformedNamespace, "namespace: "+namespace, 1)
	mustSh(t, []byte(manifest), kubectl, "apply", "-f", "-")

	key := client.ObjectKey{Namespace: namespace, Name: "outside"}
	g.Eventually(func(g Gomega) {
		got := &sunappsv1.Application{}
		g.Expect(admin.Get(ctx(), key, got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		ready := meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(sunappsv1.ReasonApplyFailed))
		g.Expect(ready.Message).To(ContainSubstring("nodePort"))
		stalled := meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Reason).To(Equal(sunappsv1.ReasonApplyFailed))

		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(got)
		g.Expect(err).NotTo(HaveOccurred())
		res, err := kstatus.Compute(&unstructured.Unstructured{Object: u})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Status).To(Equal(kstatus.FailedStatus))
	}).Should(Succeed())
}
