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
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CheckingWebhooks are the validating webhooks that make the checks of this
// package (and refuse an OperatorConfiguration's childAccess change by
// whoever may not delegate), by the names their markers give them
// (config/webhook/manifests.yaml; TestCheckingWebhooksAreGenerated holds
// the two together). They check only if the API server calls them: a
// ValidatingWebhookConfiguration must register each.
var CheckingWebhooks = []string{
	"vapplication-v1.sunstrider.cn",
	"vguestbook-v1.sunstrider.cn",
	"vdrink-v1.example.com",
	"vmycustomresource-v1.sunstrider.cn",
	"voperatorconfiguration-v1alpha1.sunstrider.cn",
}

// Webhooks says whether the checks run: the manager serves the webhooks
// that make them, and the cluster registers them. Without both, nothing
// checks a requester's rights at admission, whatever spec.childAccess
// says, and the OperatorConfiguration's status must say so (Unenforced)
// rather than claim a check that does not happen.
type Webhooks struct {
	// NotServed, when set, says why this manager serves no admission
	// webhooks, for a person: "--enable-webhooks=false", "no certificate
	// Secret". It is set before the manager starts, and read only after.
	NotServed string
	// Names are the validating webhooks that must be registered
	// (CheckingWebhooks).
	Names []string
}

// Unenforced returns, for a person, why the checks do not run, or "" when
// they do. reader lists the ValidatingWebhookConfigurations: the manager's
// cache, which a watch keeps current (no request per call). A nil
// Webhooks is a manager set up without webhooks.
func (w *Webhooks) Unenforced(ctx context.Context, reader client.Reader) (string, error) {
	if w == nil {
		return "the operator was started without its admission webhooks, so nothing checks a requester's rights " +
			"or an Application's size at admission", nil
	}
	if w.NotServed != "" {
		return fmt.Sprintf("the operator serves no admission webhooks (%s), so nothing checks a requester's rights "+
			"or an Application's size at admission: run it with --enable-webhooks (the chart's webhook.enabled=true) "+
			"and its certificate", w.NotServed), nil
	}
	list := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := reader.List(ctx, list); err != nil {
		return "", fmt.Errorf("listing the ValidatingWebhookConfigurations: %w", err)
	}
	registered := sets.New[string]()
	for i := range list.Items {
		for j := range list.Items[i].Webhooks {
			registered.Insert(list.Items[i].Webhooks[j].Name)
		}
	}
	var missing []string
	for _, name := range w.Names {
		if !registered.Has(name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return "", nil
	}
	return fmt.Sprintf("no ValidatingWebhookConfiguration registers the webhooks %s, so the API server never calls "+
		"them and nothing checks a requester's rights or an Application's size at admission: make deploy, the Helm "+
		"chart or the OLM bundle registers them (make install and make run alone do not; make dev does)",
		strings.Join(missing, ", ")), nil
}
