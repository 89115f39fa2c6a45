package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// parseChildAccess parses -child-access: comma-separated spec.childAccess
// modes, each at most once.
func parseChildAccess(s string) ([]configv1alpha1.ChildAccess, error) {
	var modes []configv1alpha1.ChildAccess
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mode := configv1alpha1.ChildAccess(part)
		if mode != configv1alpha1.ChildAccessRequester && mode != configv1alpha1.ChildAccessDelegated {
			return nil, fmt.Errorf("%q is not a mode: %s or %s", part, configv1alpha1.ChildAccessRequester,
				configv1alpha1.ChildAccessDelegated)
		}
		if slices.Contains(modes, mode) {
			return nil, fmt.Errorf("%s is given twice", mode)
		}
		modes = append(modes, mode)
	}
	return modes, nil
}

// operatorVariant is the variant name of the operator run in mode.
func operatorVariant(mode configv1alpha1.ChildAccess) string {
	return fmt.Sprintf("operator (%s)", mode)
}

// isOperator tells whether variant is the operator's, in any mode.
func isOperator(variant string) bool {
	return variant == "operator" || strings.HasPrefix(variant, "operator (")
}

// firstOperator is the first operator run at n among results.
func firstOperator(results []result, n int) (result, bool) {
	for _, r := range results {
		if r.n == n && isOperator(r.variant) {
			return r, true
		}
	}
	return result{}, false
}

// setChildAccess sets spec.childAccess of the OperatorConfiguration the
// operator reads, creating it (otherwise empty: every other field at its
// default) when absent. The operator is not running: it reads the mode at
// start. It runs after installOperatorConfig, which waits until every CRD
// is Established.
func setChildAccess(ctx context.Context, c client.Client, mode configv1alpha1.ChildAccess) error {
	cfg := &configv1alpha1.OperatorConfiguration{}
	var err error
	// The client's REST mapper may still answer "no match" for a group
	// it looked up before the CRD was served: it looks again on the next
	// request.
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			err = c.Get(ctx, client.ObjectKey{Name: configv1alpha1.ConfigurationName}, cfg)
			return !meta.IsNoMatchError(err), nil
		})
	switch {
	case apierrors.IsNotFound(err):
		cfg.Name = configv1alpha1.ConfigurationName
		cfg.Spec.ChildAccess = mode
		err = c.Create(ctx, cfg)
	case err == nil:
		cfg.Spec.ChildAccess = mode
		err = c.Update(ctx, cfg)
	}
	if err != nil {
		return fmt.Errorf("setting the OperatorConfiguration's spec.childAccess to %s: %w", mode, err)
	}
	logf("OperatorConfiguration %s: spec.childAccess %s", configv1alpha1.ConfigurationName, mode)
	return nil
}

// waitChildAccess waits until the running operator reports mode in effect
// (status.effective.childAccess, for the generation set).
func waitChildAccess(ctx context.Context, c client.Client, mode configv1alpha1.ChildAccess) error {
	cfg := &configv1alpha1.OperatorConfiguration{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true,
		func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKey{Name: configv1alpha1.ConfigurationName}, cfg); err != nil {
				return false, err
			}
			return cfg.Status.ObservedGeneration == cfg.Generation && cfg.Status.Effective.ChildAccess == mode, nil
		})
	if err != nil {
		return fmt.Errorf("waiting for the operator to report spec.childAccess %s in effect (status.effective: %q): %w",
			mode, cfg.Status.Effective.ChildAccess, err)
	}
	return nil
}

// logLevelStatusWrite tells whether the OperatorConfiguration was written
// since before only for the restarted operator's log level: its status
// changed (a new resourceVersion, the same generation) and, besides
// status.effective.logLevel, now debug, nothing of the effective
// configuration did.
func logLevelStatusWrite(ctx context.Context, c client.Client, before *configv1alpha1.OperatorConfiguration) (
	bool, error) {
	after := &configv1alpha1.OperatorConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: configv1alpha1.ConfigurationName}, after); err != nil {
		return false, err
	}
	return statusWriteOfLogLevel(before, after), nil
}

// statusWriteOfLogLevel is logLevelStatusWrite's test on two readings.
func statusWriteOfLogLevel(before, after *configv1alpha1.OperatorConfiguration) bool {
	if after.ResourceVersion == before.ResourceVersion || after.Generation != before.Generation ||
		before.Status.Effective.LogLevel == configv1alpha1.LogLevelDebug ||
		after.Status.Effective.LogLevel != configv1alpha1.LogLevelDebug {
		return false
	}
	b, a := before.Status.Effective.DeepCopy(), after.Status.Effective.DeepCopy()
	b.LogLevel, a.LogLevel = "", ""
	return equality.Semantic.DeepEqual(b, a)
}

// fileName is variant as a file name part: "operator (Requester)" is
// operator-Requester.
func fileName(variant string) string {
	return strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(variant)
}
