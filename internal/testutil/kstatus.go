package testutil

import (
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// KStatus is what Flux, Argo CD, kpt and Config Sync compute from obj
// (kstatus): Current, InProgress, Failed…
func KStatus(g gomega.Gomega, obj runtime.Object) kstatus.Status {
	return KStatusResult(g, obj).Status
}

// KStatusResult is kstatus's whole answer for obj (its status and
// message), obj converted whole to unstructured as a tool reads it.
func KStatusResult(g gomega.Gomega, obj runtime.Object) *kstatus.Result {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: u})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return res
}
