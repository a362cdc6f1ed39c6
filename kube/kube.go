// Package kube builds the Kubernetes objects knee runs as: an Indexed Job
// whose pods are the shards of one load, and a Deployment with a headless
// Service of simulator replicas for a router under test to spread over. It
// builds typed objects (k8s.io/api) and renders them as YAML; it talks to
// no cluster, and of knee it imports only the data model, whose judgement
// of what names a credential keeps every one out of a manifest.
package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml3 "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ResultsDir is where a shard writes its result file on a results volume.
const ResultsDir = "/results"

// InputsDir is where a ConfigMap of input files (datasets, tokenizers,
// models files) is mounted, read-only, in every pod.
const InputsDir = "/inputs"

// APIKeyEnv is the variable knee reads its API key from when --api-key is
// not given: a manifest sets it from a Secret, never in clear.
const APIKeyEnv = "OPENAI_API_KEY"

// SecretRef names a key of a Kubernetes Secret.
type SecretRef struct{ Name, Key string }

// ParseSecretRef reads NAME[:KEY]; the key defaults to def.
func ParseSecretRef(s, def string) (SecretRef, error) {
	name, key, found := strings.Cut(s, ":")
	if !found {
		key = def
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return SecretRef{}, fmt.Errorf("secret name %q: %s", name, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return SecretRef{}, fmt.Errorf("secret key %q: %s", key, strings.Join(errs, "; "))
	}
	return SecretRef{Name: name, Key: key}, nil
}

// checkNames refuses a name or namespace the API server would reject, so
// that a manifest is valid by construction rather than at kubectl apply.
func checkNames(name, namespace, configMap string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("name %q is not a DNS label: %s", name, strings.Join(errs, "; "))
	}
	if namespace != "" {
		if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
			return fmt.Errorf("namespace %q is not a DNS label: %s", namespace, strings.Join(errs, "; "))
		}
	}
	if configMap != "" {
		if errs := validation.IsDNS1123Subdomain(configMap); len(errs) > 0 {
			return fmt.Errorf("ConfigMap %q: %s", configMap, strings.Join(errs, "; "))
		}
	}
	return nil
}

// inputs mounts a ConfigMap's files read-only at InputsDir.
func inputs(pod *corev1.PodSpec, configMap string) {
	if configMap == "" {
		return
	}
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "inputs", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}})
	for i := range pod.Containers {
		pod.Containers[i].VolumeMounts = append(pod.Containers[i].VolumeMounts, corev1.VolumeMount{Name: "inputs", MountPath: InputsDir, ReadOnly: true})
	}
}

// ShardJob describes an Indexed Job of knee run shards.
type ShardJob struct {
	Name, Namespace, Image string
	Shards                 int
	// Target is the base URL every shard drives, or TargetSecret the
	// Secret key it comes from (a URL that carries a credential).
	Target       string
	TargetSecret *SecretRef
	// Headers are request headers whose values come from Secrets, and
	// MetricsURLSecret the Secret key of the server's metrics URL.
	Headers          []HeaderSecret
	MetricsURLSecret *SecretRef
	// StartAt is the instant every shard starts its window.
	StartAt time.Time
	// Nonce is set as KNEE_RUN_NONCE in every pod, so the shards' prompts
	// are the ones a single process would send.
	Nonce string
	// RunArgs are further knee run flags (the load, the workload, ...).
	RunArgs []string
	// ResultsClaim, when set, is a PersistentVolumeClaim (ReadWriteMany)
	// mounted at ResultsDir, where each shard writes shard-I.json; without
	// it each shard prints its JSON result on stdout and nothing else.
	ResultsClaim string
	// CPU and Memory are each pod's requests.
	CPU, Memory string
	// APIKey, when set, is the Secret key every pod's API key comes from
	// (as $OPENAI_API_KEY): a key in RunArgs would be in the manifest, and
	// in every pod's description, in clear.
	APIKey *SecretRef
	// InputsConfigMap, when set, is mounted read-only at InputsDir.
	InputsConfigMap string
}

// MaxShards is the most shards one Job runs: every shard starts at once,
// and Kubernetes refuses an Indexed Job whose parallelism passes 100,000
// (the batch API's maxParallelismForIndexedJob).
const MaxShards = 100_000

// Job returns the Job. It carries no CPU limit on purpose: a throttled
// client falls behind its schedule, and knee would then report itself
// unhealthy instead of measuring the server.
func (o ShardJob) Job() (*batchv1.Job, error) {
	if o.Shards < 1 || (o.Target == "") == (o.TargetSecret == nil) || o.Name == "" {
		return nil, errors.New("a shard job needs a name, one target (a URL, or a Secret's) and at least one shard")
	}
	if o.Shards > MaxShards {
		return nil, fmt.Errorf("%d shards: Kubernetes runs at most %d pods of an Indexed Job at once, and a shard job starts every shard together",
			o.Shards, MaxShards)
	}
	if err := checkNames(o.Name, o.Namespace, o.InputsConfigMap); err != nil {
		return nil, err
	}
	if err := checkPod(o.Image, o.ResultsClaim, o.Target); err != nil {
		return nil, err
	}
	requests, err := resources(o.CPU, o.Memory)
	if err != nil {
		return nil, err
	}
	args, env := o.command()
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	n := int32(o.Shards)
	indexed := batchv1.IndexedCompletion
	labels := map[string]string{"app.kubernetes.io/name": "knee", "app.kubernetes.io/component": "load-shard", "knee/job": o.Name}
	c := corev1.Container{
		Name: "knee", Image: o.Image, Args: args, Env: env,
		Resources: corev1.ResourceRequirements{Requests: requests},
	}
	if o.APIKey != nil {
		c.Env = append(c.Env, fromSecret(APIKeyEnv, *o.APIKey))
	}
	pod := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
		// One shard per node where the cluster can: shards on one node
		// share its CPUs and would measure each other's lateness.
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"knee/job": o.Name}}}},
	}
	if o.ResultsClaim != "" {
		pod.Volumes = []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.ResultsClaim}}}}
		pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}}
	}
	inputs(&pod, o.InputsConfigMap)
	// A shard retried after the start would send its part late: fail it,
	// and let the merge refuse the missing shard, rather than mix runs.
	backoff := int32(0)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed, Completions: &n, Parallelism: &n, BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}, nil
}

// command is a shard's knee run: its arguments and the environment that
// carries its secrets (the target, headers, the metrics URL) by name.
func (o ShardJob) command() ([]string, []corev1.EnvVar) {
	out := "-"
	if o.ResultsClaim != "" {
		out = ResultsDir + "/shard-$(JOB_COMPLETION_INDEX).json"
	}
	env := []corev1.EnvVar{{Name: "KNEE_RUN_NONCE", Value: o.Nonce}}
	target := o.Target
	if o.TargetSecret != nil {
		target, env = "$(KNEE_TARGET)", append(env, fromSecret("KNEE_TARGET", *o.TargetSecret))
	}
	args := []string{"run", "--base-url", target, "--shards", strconv.Itoa(o.Shards),
		"--start-at", o.StartAt.UTC().Format(time.RFC3339Nano), "--output", out, "--quiet"}
	for i, h := range o.Headers {
		v := fmt.Sprintf("KNEE_HEADER_%d", i+1)
		args, env = append(args, "--header", h.Header+":$("+v+")"), append(env, fromSecret(v, h.Secret))
	}
	if o.MetricsURLSecret != nil {
		args, env = append(args, "--server-metrics-url", "$(KNEE_METRICS_URL)"), append(env, fromSecret("KNEE_METRICS_URL", *o.MetricsURLSecret))
	}
	return append(args, o.RunArgs...), env
}

// SimFleet describes replicas of knee sim behind a headless Service, so
// that a router or gateway under test resolves every replica.
type SimFleet struct {
	Name, Namespace, Image string
	Replicas               int
	// SimArgs are further knee sim flags (--preset, --models, ...).
	SimArgs     []string
	CPU, Memory string
	// InputsConfigMap, when set, is mounted read-only at InputsDir (a
	// models or responses file).
	InputsConfigMap string
}

// SimPort is the port every replica serves on.
const SimPort = 8000

// Objects returns the Deployment and its headless Service.
func (o SimFleet) Objects() (*appsv1.Deployment, *corev1.Service, error) {
	if o.Replicas < 1 || o.Name == "" {
		return nil, nil, errors.New("a simulator fleet needs a name and at least one replica")
	}
	if o.Replicas > math.MaxInt32 {
		return nil, nil, fmt.Errorf("%d replicas: a Deployment holds at most %d", o.Replicas, math.MaxInt32)
	}
	if err := checkNames(o.Name, o.Namespace, o.InputsConfigMap); err != nil {
		return nil, nil, err
	}
	if err := checkPod(o.Image, "", ""); err != nil {
		return nil, nil, err
	}
	requests, err := resources(o.CPU, o.Memory)
	if err != nil {
		return nil, nil, err
	}
	labels := map[string]string{"app.kubernetes.io/name": "knee", "app.kubernetes.io/component": "simulator", "knee/fleet": o.Name}
	n := int32(o.Replicas)
	args := append([]string{"sim", "--host", "0.0.0.0", "--port", strconv.Itoa(SimPort)}, o.SimArgs...)
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(SimPort)}},
		PeriodSeconds: 5}
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"knee/fleet": o.Name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "sim", Image: o.Image, Args: args,
					Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: SimPort}},
					ReadinessProbe: probe, Resources: corev1.ResourceRequirements{Requests: requests}}},
			}},
		},
	}
	inputs(&dep.Spec.Template.Spec, o.InputsConfigMap)
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"knee/fleet": o.Name},
			Ports: []corev1.ServicePort{{Name: "http", Port: SimPort, TargetPort: intstr.FromInt32(SimPort)}}},
	}
	return dep, svc, nil
}

// resources parses the pod requests.
func resources(cpu, memory string) (corev1.ResourceList, error) {
	list := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s request %q: %v", name, v, err)
		}
		list[name] = q
	}
	return list, nil
}

// YAML renders objects as one multi-document YAML stream. Every string
// but plain words is double-quoted, its controls escaped (see
// plainSafe): a prompt with U+0085 had its words folded, and a DEL byte
// made the encoder fail.
func YAML(objects ...any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml3.NewEncoder(&b)
	enc.SetIndent(2)
	for _, o := range objects {
		// Through JSON, as the API objects' tags say; a YAML round trip
		// here would already fold or refuse what quoteRisky escapes.
		j, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		// Leave out what the cluster fills in (an empty status, a null
		// creation time): they are noise in a manifest to apply.
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return nil, err
		}
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		if spec, ok := m["spec"].(map[string]any); ok {
			if tpl, ok := spec["template"].(map[string]any); ok {
				if md, ok := tpl["metadata"].(map[string]any); ok {
					delete(md, "creationTimestamp")
				}
			}
		}
		// The node is built here, not by Node.Encode, which parses its own
		// output back and fails on some strings it writes ("\n0").
		n := toNode(m)
		quoteRisky(n)
		if err := enc.Encode(n); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// toNode is the YAML node of a value decoded from JSON: maps (keys in
// order), lists, strings, numbers, booleans and null.
func toNode(v any) *yaml3.Node {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml3.Node{Kind: yaml3.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n.Content = append(n.Content, &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!str", Value: k}, toNode(v[k]))
		}
		return n
	case []any:
		n := &yaml3.Node{Kind: yaml3.SequenceNode, Tag: "!!seq"}
		for _, e := range v {
			n.Content = append(n.Content, toNode(e))
		}
		return n
	case string:
		return &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!str", Value: v}
	case bool:
		return &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(v), 10)}
		}
		return &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!null", Value: "null"}
}

// quoteRisky double-quotes every string scalar under n but those every
// YAML reader takes as the same string when plain (see plainSafe).
func quoteRisky(n *yaml3.Node) {
	if n.Kind == yaml3.ScalarNode && n.Tag == "!!str" && !plainSafe(n.Value) {
		n.Style = yaml3.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		quoteRisky(c)
	}
}

// plainWord is a string no YAML reader takes for anything else: a word
// (or a flag) of letters, digits and _ . / : - not ending in a colon.
var plainWord = regexp.MustCompile(`^-{0,2}[A-Za-z][A-Za-z0-9_./:-]*$`)

// plainSafe reports whether s may be written plain: a plainWord that
// YAML 1.1 (kubectl's reader) does not read as a boolean or null. All
// else is double-quoted, so a merge key (<<), NEL (read as a line break
// by YAML 1.1, folding a prompt's words), DEL, a line separator, a
// byte-order mark, a leading newline ("\n0" as a block scalar, which
// kubectl's reader refuses) or "yes" (a boolean to it) reach the pod as
// they were given.
func plainSafe(s string) bool {
	if !plainWord.MatchString(s) || strings.HasSuffix(s, ":") {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}
