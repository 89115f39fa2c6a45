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

// Package metricsauth serves the metrics endpoint only to callers the API
// server authenticates (TokenReview of a bearer token) and authorizes
// (SubjectAccessReview), like controller-runtime's
// filters.WithAuthenticationAndAuthorization, with one difference: a bearer
// token the API server does not accept is answered 401 Unauthorized.
// controller-runtime's filter answers it 500 and logs an error with a stack
// trace at every scrape (its bearer-token authenticator reports a rejected
// token as an error), so a scraper with an expired or wrong token looked
// like a broken operator. For the same reason the token is reviewed by a
// reviewer of this package rather than k8s.io/apiserver's webhook token
// authenticator, which also reports a rejected token as an error; the
// audience check follows that authenticator (authenticator.WithAudiences in
// the request's context, the review's spec.audiences, and the intersection
// with its status.audiences).
package metricsauth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// backoff is how the SubjectAccessReview calls are retried when the API
// server does not answer (controller-runtime's values).
var backoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

const (
	// tokenReviewTimeout bounds one TokenReview.
	tokenReviewTimeout = 10 * time.Second
	// authenticatedTTL and rejectedTTL are how long a token's review is
	// cached (controller-runtime: 1 min for both).
	authenticatedTTL, rejectedTTL = time.Minute, 10 * time.Second
)

// FilterProvider returns a metricsserver.Options.FilterProvider:
// authentication of the request's bearer token by TokenReview, authorization
// by SubjectAccessReview of the request's verb on its non-resource path
// (allowed cached 5 min, denied 30 s). No bearer token or one the API
// server rejects: 401; authenticated but not allowed: 403; the API server
// unreachable: 500.
//
// audiences are those the token must be issued for, at least one of them
// (the TokenReview's spec.audiences). None: the API server's own audiences
// (its --api-audiences, by default its service account issuer), which it
// applies to a review that names none; they are those of the token the
// kubelet mounts in every Pod, so a scraper's own ServiceAccount token is
// accepted and a token issued for any other audience is refused.
func FilterProvider(audiences []string) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
		return newFilter(config, httpClient, authenticator.Audiences(audiences))
	}
}

func newFilter(config *rest.Config, httpClient *http.Client, audiences authenticator.Audiences) (metricsserver.Filter, error) {
	authn, err := authenticationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	tokens := tokencache.New(tokenReviewer{authn.TokenReviews()}, false, authenticatedTTL, rejectedTTL)
	authorizerConfig := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz,
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       &backoff,
	}
	delegatingAuthorizer, err := authorizerConfig.New()
	if err != nil {
		return nil, fmt.Errorf("creating the metrics authorizer: %w", err)
	}

	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			token, found := bearerToken(req)
			if !found {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			ctx := req.Context()
			if len(audiences) > 0 {
				// The token cache keys its reviews by these audiences too.
				ctx = authenticator.WithAudiences(ctx, audiences)
			}
			res, ok, err := tokens.AuthenticateToken(ctx, token)
			if err != nil {
				log.Error(err, "Authenticating a metrics request failed")
				http.Error(w, "Authentication failed", http.StatusInternalServerError)
				return
			}
			if !ok {
				log.V(4).Info("Metrics request with a rejected bearer token")
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			attributes := authorizer.AttributesRecord{
				User: res.User,
				Verb: strings.ToLower(req.Method),
				Path: req.URL.Path,
			}
			decision, reason, err := delegatingAuthorizer.Authorize(req.Context(), attributes)
			if err != nil {
				log.Error(err, "Authorizing a metrics request failed", "user", res.User.GetName())
				http.Error(w, "Authorization failed", http.StatusInternalServerError)
				return
			}
			if decision != authorizer.DecisionAllow {
				log.V(4).Info("Metrics request denied", "user", res.User.GetName(), "reason", reason)
				http.Error(w, fmt.Sprintf("Authorization denied for user %s", res.User.GetName()), http.StatusForbidden)
				return
			}
			handler.ServeHTTP(w, req)
		}), nil
	}, nil
}

// bearerToken returns the token of the request's "Authorization: Bearer"
// header.
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, found := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	return token, found && strings.EqualFold(scheme, "Bearer") && token != ""
}

// tokenReviewer authenticates a bearer token with a TokenReview. A token the
// API server rejects is "not authenticated", not an error: the review's
// status.error only explains the rejection.
//
// The audiences of the context (authenticator.WithAudiences) go into the
// review, and the token is authenticated only for those of them the API
// server found it valid for (status.audiences), as k8s.io/apiserver's
// webhook token authenticator does. That authenticator takes implicit
// audiences when the status names none; this reviewer has none, so such a
// review is a rejection: kube-apiserver always names them.
type tokenReviewer struct {
	reviews authenticationv1.TokenReviewInterface
}

func (t tokenReviewer) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	wantAudiences, checkAudiences := authenticator.AudiencesFrom(ctx)
	ctx, cancel := context.WithTimeout(ctx, tokenReviewTimeout)
	defer cancel()
	review, err := t.reviews.Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{
		Token: token, Audiences: wantAudiences,
	}}, metav1.CreateOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("reviewing a bearer token: %w", err)
	}
	if !review.Status.Authenticated {
		return nil, false, nil
	}
	var audiences authenticator.Audiences
	if checkAudiences {
		audiences = wantAudiences.Intersect(review.Status.Audiences)
		if len(audiences) == 0 {
			return nil, false, nil
		}
	}
	u := review.Status.User
	var extra map[string][]string
	if u.Extra != nil {
		extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = v
		}
	}
	return &authenticator.Response{Audiences: audiences, User: &user.DefaultInfo{
		Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
	}}, true, nil
}
