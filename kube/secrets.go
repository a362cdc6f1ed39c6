package kube

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/distribution/reference"
	"github.com/kneebench/knee/results"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A pod's arguments stand in its manifest and in every pod's description,
// readable by anyone who can read the Job: no credential may be among
// them. A credential reaches a pod only as a reference to a Secret, an
// environment variable the kubelet fills, which knee reads ($OPENAI_API_KEY)
// or which an argument names as $(VAR), expanded by the kubelet when the
// container starts. Every manifest's arguments go through checkArgs, so a
// credential that slipped past the flags' own checks still never lands in
// one.

// credentialName reports whether a header, parameter or key name likely
// carries a credential: the names result files redact.
func credentialName(name string) bool { return results.Sensitive(name) }

// tokenShapes are the shapes of well-known API keys and bearer tokens.
var tokenShapes = regexp.MustCompile(`(?i)\bbearer\s+\S{8,}|\b(sk|pk|rk)-[A-Za-z0-9_\-]{16,}|\b(ghp|gho|ghs|github_pat|hf|xox[abp])_[A-Za-z0-9_]{16,}|\bAKIA[0-9A-Z]{16}\b|\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}`)

// envRef matches an argument that is wholly a kubelet $(VAR) reference.
var envRef = regexp.MustCompile(`^\$\([A-Z_][A-Z0-9_]*\)$`)

// SecretIn says what credential arg seems to carry (userinfo or a
// credential-like query parameter in a URL, a credential-like key in a
// JSON body, a credential-like header, or a token of a well-known shape),
// or "" when it seems to carry none.
func SecretIn(arg string) string {
	if m := tokenShapes.FindString(arg); m != "" {
		return "a token of a well-known shape"
	}
	if strings.Contains(arg, "://") {
		if u, err := url.Parse(strings.TrimSpace(arg)); err == nil {
			if u.User != nil {
				return "a user and password in a URL"
			}
			for k := range u.Query() {
				if credentialName(k) {
					return fmt.Sprintf("a credential-like query parameter (%s) in a URL", k)
				}
			}
		}
	}
	if k := jsonCredential(arg); k != "" {
		return fmt.Sprintf("a credential-like field (%s) in a JSON body", k)
	}
	if name, value, ok := strings.Cut(arg, ":"); ok && !strings.ContainsAny(name, " /{\"") && credentialName(name) &&
		!envRef.MatchString(strings.TrimSpace(value)) {
		return fmt.Sprintf("a credential-like header (%s)", strings.TrimSpace(name))
	}
	return ""
}

// jsonCredential is the first credential-like key, at any depth, of a
// JSON object or array given as text, or "".
func jsonCredential(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return ""
	}
	var walk func(any) string
	walk = func(x any) string {
		switch x := x.(type) {
		case map[string]any:
			for k, val := range x {
				if credentialName(k) {
					return k
				}
				if found := walk(val); found != "" {
					return found
				}
			}
		case []any:
			for _, val := range x {
				if found := walk(val); found != "" {
					return found
				}
			}
		}
		return ""
	}
	return walk(v)
}

// checkArgs refuses arguments that carry a credential.
func checkArgs(args []string) error {
	for i, a := range args {
		if !utf8.ValidString(a) {
			// JSON, and so the manifest, would carry U+FFFD instead.
			return fmt.Errorf("an argument (%s) is not valid UTF-8: a manifest cannot carry it unchanged", argName(args, i))
		}
		if what := SecretIn(a); what != "" {
			return fmt.Errorf("an argument carries %s, which would stand in clear in the manifest: give it from a Secret", what)
		}
	}
	return nil
}

// argName names argument i for a message: the flag it is the value of,
// or its position.
func argName(args []string, i int) string {
	if strings.HasPrefix(args[i], "--") {
		name, _, _ := strings.Cut(args[i], "=")
		return name
	}
	if i > 0 && strings.HasPrefix(args[i-1], "--") {
		return "the value of " + args[i-1]
	}
	return fmt.Sprintf("argument %d", i+1)
}

// HeaderSecret is a request header whose value comes from a Secret.
type HeaderSecret struct {
	Header string
	Secret SecretRef
}

// ParseHeaderSecret reads --header-secret HEADER=NAME[:KEY] (the key
// defaults to the header's name, lowercased).
func ParseHeaderSecret(s string) (HeaderSecret, error) {
	header, ref, ok := strings.Cut(s, "=")
	header = strings.TrimSpace(header)
	if !ok || header == "" || strings.ContainsAny(header, " :\t") {
		return HeaderSecret{}, fmt.Errorf("%q: want HEADER=SECRET[:KEY], e.g. X-Api-Key=vllm-key", s)
	}
	r, err := ParseSecretRef(ref, strings.ToLower(header))
	if err != nil {
		return HeaderSecret{}, err
	}
	return HeaderSecret{Header: header, Secret: r}, nil
}

// fromSecret is an environment variable set from a Secret's key.
func fromSecret(name string, r SecretRef) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: r.Key}}}
}

// checkPod refuses, before a manifest is printed, what the API server or
// the kubelet would refuse later: an image that is no image reference, a
// results claim that is no claim name, a target that is no http(s) URL.
func checkPod(image, claim, target string) error {
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return fmt.Errorf("image %q is not an image reference (e.g. ghcr.io/kneebench/knee:latest): %v", image, err)
	}
	if claim != "" {
		if errs := validation.IsDNS1123Subdomain(claim); len(errs) > 0 {
			return fmt.Errorf("results claim %q is not a PersistentVolumeClaim name: %s", claim, strings.Join(errs, "; "))
		}
	}
	if target != "" {
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("target %q is not an http(s) URL like http://vllm:8000/v1", target)
		}
	}
	return nil
}

// CheckRunFlags refuses a credential in a shard pod's knee run flags
// (the flags given, by name, with their values; each --header apart),
// naming the flag that gives it from a Secret instead: whatever is given
// after -- stands in clear in the manifest and every pod's description.
func CheckRunFlags(given map[string]string, headers []string) error {
	const clear = "would stand in clear in the manifest and every pod's description"
	if _, ok := given["api-key"]; ok {
		return fmt.Errorf("--api-key %s: put the key in a Secret and give --api-key-secret NAME[:KEY]", clear)
	}
	for _, h := range headers {
		if SecretIn(h) != "" {
			name, _, _ := strings.Cut(h, ":")
			name = strings.TrimSpace(name)
			return fmt.Errorf("--header %s carries a credential, which %s: give it from a Secret, --header-secret %s=SECRET[:KEY]", name, clear, name)
		}
	}
	if what := SecretIn(given["extra-body"]); what != "" {
		return fmt.Errorf("--extra-body carries %s, which %s; a body field cannot come from a Secret: send the credential as a header from one (--header-secret)", what, clear)
	}
	if what := SecretIn(given["server-metrics-url"]); what != "" {
		return fmt.Errorf("--server-metrics-url carries %s, which %s: give the URL from a Secret, --server-metrics-url-secret NAME[:KEY]", what, clear)
	}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if what := SecretIn(given[name]); what != "" {
			return fmt.Errorf("--%s carries %s, which %s", name, what, clear)
		}
	}
	return nil
}

// InPod refuses an input file (given by flag) a pod cannot have: one not
// on the ConfigMap of inputs mounted at InputsDir.
func InPod(flag, p, configMap string) error {
	if configMap == "" {
		return fmt.Errorf("%s %s: a pod has no files of this machine; put the file in a ConfigMap, give --inputs-configmap NAME and %s %s/%s", flag, p, flag, InputsDir, path.Base(p))
	}
	if clean := path.Clean(p); !strings.HasPrefix(clean, InputsDir+"/") {
		return fmt.Errorf("%s %s: the ConfigMap %s is mounted at %s: give %s %s/%s", flag, p, configMap, InputsDir, flag, InputsDir, path.Base(p))
	}
	return nil
}

// SecretFlags are the Secrets a shard job's credentials come from, as
// knee k8s job's flags give them (NAME[:KEY]; HEADER=NAME[:KEY]).
type SecretFlags struct {
	APIKey, Target, MetricsURL string
	Headers                    []string
}

// Apply sets the job's references to them.
func (f SecretFlags) Apply(o *ShardJob) error {
	for _, r := range []struct {
		flag, value, key string
		dst              **SecretRef
	}{{"--api-key-secret", f.APIKey, "api-key", &o.APIKey}, {"--base-url-secret", f.Target, "base-url", &o.TargetSecret},
		{"--server-metrics-url-secret", f.MetricsURL, "metrics-url", &o.MetricsURLSecret}} {
		if r.value == "" {
			continue
		}
		ref, err := ParseSecretRef(r.value, r.key)
		if err != nil {
			return fmt.Errorf("%s: %w", r.flag, err)
		}
		*r.dst = &ref
	}
	for _, h := range f.Headers {
		hs, err := ParseHeaderSecret(h)
		if err != nil {
			return fmt.Errorf("--header-secret: %w", err)
		}
		o.Headers = append(o.Headers, hs)
	}
	return nil
}
