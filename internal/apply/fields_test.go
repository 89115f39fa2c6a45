package apply

import (
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

func TestInDomain(t *testing.T) {
	name := func(n string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &n} }
	key := func(k string) fieldpath.PathElement {
		return fieldpath.PathElement{Key: &value.FieldList{{Name: "name", Value: value.NewValueInterface(k)}}}
	}
	tests := []struct {
		name string
		path fieldpath.Path
		want bool
	}{
		{name: "a spec field", path: fieldpath.MakePathOrDie("spec", "replicas"), want: true},
		{name: "a container's image", path: fieldpath.Path{name("spec"), name("template"), name("spec"),
			name("containers"), key("c0"), name("image")}, want: true},
		{name: "a ConfigMap's data key", path: fieldpath.MakePathOrDie("data", "drink"), want: true},
		{name: "the object's labels", path: fieldpath.MakePathOrDie("metadata", "labels", "team")},
		{name: "status", path: fieldpath.MakePathOrDie("status", "replicas")},
		{name: "a Pod template label", path: fieldpath.MakePathOrDie("spec", "template", "metadata", "labels", "team")},
		{name: "a Pod template annotation", path: fieldpath.MakePathOrDie("spec", "template", "metadata", "annotations",
			"kubectl.kubernetes.io/restartedAt")},
		// Found by TestDriftedAgreesWithAPIServer: `kubectl rollout restart`
		// on a template without annotations creates the map and owns it;
		// taking it over was a write that changed nothing.
		{name: "the Pod template's annotations map", path: fieldpath.MakePathOrDie("spec", "template", "metadata", "annotations")},
		{name: "the Pod template's labels map", path: fieldpath.MakePathOrDie("spec", "template", "metadata", "labels")},
		{name: "the Pod template's metadata", path: fieldpath.MakePathOrDie("spec", "template", "metadata"), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(inDomain(tt.path)).To(Equal(tt.want))
		})
	}
}
