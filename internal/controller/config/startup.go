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

package config

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/settings"
)

// Startup returns the settings the operator starts with: the
// OperatorConfiguration's over defaults, a refused field keeping the value
// the status last reported in effect. found is false when there is no
// OperatorConfiguration, or no such kind in the cluster: defaults then.
func Startup(ctx context.Context, c client.Reader, defaults *settings.Settings) (s settings.Settings, found bool, err error) {
	cfg := &configv1alpha1.OperatorConfiguration{}
	err = c.Get(ctx, ConfigurationKey, cfg)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return *defaults, false, nil
	}
	if err != nil {
		return settings.Settings{}, false, fmt.Errorf("reading OperatorConfiguration %s: %w", ConfigurationKey.Name, err)
	}
	namespaces := &metav1.PartialObjectMetadataList{}
	namespaces.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := c.List(ctx, namespaces); err != nil {
		return settings.Settings{}, false, fmt.Errorf("listing namespaces: %w", err)
	}
	existing := make(map[string]bool, len(namespaces.Items))
	for _, ns := range namespaces.Items {
		existing[ns.Name] = true
	}
	exists := func(name string) (bool, error) { return existing[name], nil }
	lastGood, _, err := settings.Resolve(&cfg.Status.Effective, defaults, defaults, exists)
	if err != nil {
		return settings.Settings{}, false, err
	}
	s, _, err = settings.Resolve(&cfg.Spec, defaults, &lastGood, exists)
	return s, true, err
}
