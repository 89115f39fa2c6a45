package main

import (
	"slices"
	"testing"
)

func TestCRDNamesOfTheRenderedConfig(t *testing.T) {
	rendered := []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: applications.apps.sunstrider.cn
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: sunstrider-operator-validating-webhook-configuration
webhooks:
- name: vapplication-v1.sunstrider.cn
  clientConfig:
    url: https://localhost:29443/validate
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: mycustomresources.poc.test.domain
`)
	list, err := withCABundle(rendered, []byte("ca"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := crdNames(list)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"applications.apps.sunstrider.cn", "mycustomresources.poc.test.domain"}
	if !slices.Equal(names, want) {
		t.Errorf("crdNames = %q, want %q", names, want)
	}
}
