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

package access

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

func registering(names ...string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "vwc-" + strings.Join(names, "-")}}
	for _, n := range names {
		vwc.Webhooks = append(vwc.Webhooks, admissionregistrationv1.ValidatingWebhook{Name: n})
	}
	return vwc
}

// Unenforced says why no check runs, naming what is missing, and nothing
// when the webhooks are served and every one is registered, in one
// configuration or several.
func TestWebhooksUnenforced(t *testing.T) {
	names := []string{"va.example.com", "vb.example.com"}
	for _, tt := range []struct {
		name     string
		webhooks *Webhooks
		objects  []client.Object
		want     []string // substrings; none: enforced
	}{
		{name: "served and registered", webhooks: &Webhooks{Names: names},
			objects: []client.Object{registering("va.example.com", "vb.example.com", "other")}},
		{name: "registered by two configurations", webhooks: &Webhooks{Names: names},
			objects: []client.Object{registering("va.example.com"), registering("vb.example.com")}},
		{name: "not served", webhooks: &Webhooks{NotServed: "--enable-webhooks=false", Names: names},
			objects: []client.Object{registering(names...)},
			want:    []string{"serves no admission webhooks (--enable-webhooks=false)", "webhook.enabled=true"}},
		{name: "no manager webhooks at all", webhooks: nil, want: []string{"started without its admission webhooks"}},
		{name: "none registered (make install, make run)", webhooks: &Webhooks{Names: names},
			want: []string{"registers the webhooks va.example.com, vb.example.com", "make deploy"}},
		{name: "one missing", webhooks: &Webhooks{Names: names}, objects: []client.Object{registering("va.example.com")},
			want: []string{"registers the webhooks vb.example.com,", "make deploy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objects...).Build()
			why, err := tt.webhooks.Unenforced(context.Background(), reader)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.want) == 0 && why != "" {
				t.Errorf("want enforced, got %q", why)
			}
			for _, w := range tt.want {
				if !strings.Contains(why, w) {
					t.Errorf("%q does not say %q", why, w)
				}
			}
		})
	}
}

// The names the enforcement looks for are those of the webhooks the
// operator generates: a renamed webhook would otherwise read as never
// registered.
func TestCheckingWebhooksAreGenerated(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var generated []string
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.Unmarshal([]byte(doc), &vwc); err != nil {
			t.Fatal(err)
		}
		if vwc.Kind != "ValidatingWebhookConfiguration" {
			continue
		}
		for _, w := range vwc.Webhooks {
			generated = append(generated, w.Name)
		}
	}
	for _, name := range CheckingWebhooks {
		if !slices.Contains(generated, name) {
			t.Errorf("CheckingWebhooks names %s, which config/webhook/manifests.yaml does not (%v)", name, generated)
		}
	}
}
