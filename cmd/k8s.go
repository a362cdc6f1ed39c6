package cmd

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kneebench/knee/kube"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// defaultImage is the image the manifests run; deploy/Dockerfile builds it.
const defaultImage = "ghcr.io/kneebench/knee:latest"

func newK8sCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "k8s",
		Short: "Print Kubernetes manifests: sharded load (an Indexed Job), simulator fleets",
		Long: `k8s prints manifests filled in, to pipe into kubectl apply -f -, so nobody edits
YAML by hand. See deploy/kubernetes/README.md for collecting and merging the
shards' results.`,
	}
	c.AddCommand(newK8sJobCmd(), newK8sSimCmd())
	return c
}

func newK8sJobCmd() *cobra.Command {
	o := kube.ShardJob{}
	var delay time.Duration
	var secrets kube.SecretFlags
	c := &cobra.Command{
		Use:   "job --shards N --base-url URL [-- knee run flags]",
		Short: "An Indexed Job of N knee run shards against one target, started together",
		Long: `job prints an Indexed Job (completions = parallelism = N) whose pod I runs
knee run --shards N against --base-url with the run flags given after --, all
starting their window at one instant (--start-delay from now, baked into the
manifest: apply it within that time). Each pod prints its JSON result on
stdout (or writes shard-I.json to --results-claim); knee merge joins them.`,
		Example: `  knee k8s job --shards 8 --base-url http://vllm.default.svc:8000/v1 -- --rate 400 --duration 5m --input-tokens 512 | kubectl apply -f -`,
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error {
			if o.Shards < 1 || (o.Target == "") == (secrets.Target == "") {
				return usageErr("give --shards N (at least 1) and one of --base-url URL and --base-url-secret NAME[:KEY]")
			}
			if what := kube.SecretIn(o.Target); what != "" {
				return usageErr("--base-url carries %s, which would stand in clear in the manifest: give the URL from a Secret, --base-url-secret NAME[:KEY]", what)
			}
			if delay < 0 {
				return usageErr("--start-delay must not be negative")
			}
			if err := checkRunFlags(args, o.InputsConfigMap); err != nil {
				return err
			}
			if err := secrets.Apply(&o); err != nil {
				return usageErr("%w", err)
			}
			o.RunArgs = args
			o.StartAt = time.Now().Add(delay).Truncate(time.Second)
			o.Nonce = fmt.Sprintf("%08x", rand.Uint32())
			job, err := o.Job()
			if err != nil {
				return usageErr("%w", err)
			}
			y, err := kube.YAML(job)
			if err != nil {
				return err
			}
			_, err = c.OutOrStdout().Write(y)
			return err
		}),
	}
	registerJobFlags(c, &o, &delay)
	registerSecrets(c, &secrets)
	return c
}

// registerJobFlags declares the shard job's own flags.
func registerJobFlags(c *cobra.Command, o *kube.ShardJob, delay *time.Duration) {
	fs := c.Flags()
	fs.IntVar(&o.Shards, "shards", 0, "number of shards (pods)")
	fs.StringVar(&o.Target, "base-url", "", "API root every shard drives, e.g. http://vllm:8000/v1")
	// Its names of before one name served every command still work.
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if now, ok := map[string]string{"target": "base-url", "target-secret": "base-url-secret"}[name]; ok {
			return pflag.NormalizedName(now)
		}
		return pflag.NormalizedName(name)
	})
	fs.StringVar(&o.Name, "name", "knee-shards", "the Job's name")
	fs.StringVar(&o.Namespace, "namespace", "", "the Job's namespace (default: kubectl's)")
	fs.StringVar(&o.Image, "image", defaultImage, "the knee image")
	fs.StringVar(&o.ResultsClaim, "results-claim", "", "a ReadWriteMany PersistentVolumeClaim to write shard-I.json to (default: JSON on stdout)")
	fs.StringVar(&o.CPU, "cpu", "1", "CPU request per shard (no limit is set: throttling would make the client late); one core offers about 5,000 requests/s")
	fs.StringVar(&o.Memory, "memory", "1Gi", "memory request per shard")
	fs.DurationVar(delay, "start-delay", 2*time.Minute, "the shards start their window this long after the manifest is printed")
	fs.StringVar(&o.InputsConfigMap, "inputs-configmap", "", "a ConfigMap of input files (dataset, tokenizer) mounted read-only at "+kube.InputsDir+" in every pod: give them after -- as "+kube.InputsDir+"/FILE")
}

func newK8sSimCmd() *cobra.Command {
	o := kube.SimFleet{}
	c := &cobra.Command{
		Use:   "sim --replicas N [-- knee sim flags]",
		Short: "A Deployment of N knee sim replicas behind a headless Service",
		Long: `sim prints a Deployment of N simulator replicas (each its own engine, KV
cache and /metrics) and a headless Service of the same name, so a router or
gateway under test resolves every replica's address.`,
		Example: `  knee k8s sim --replicas 16 -- --sim-preset h100-80gb/llama-3.1-8b | kubectl apply -f -`,
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error {
			if err := checkSimFlags(args, o.InputsConfigMap); err != nil {
				return err
			}
			o.SimArgs = args
			dep, svc, err := o.Objects()
			if err != nil {
				return usageErr("%w", err)
			}
			y, err := kube.YAML(dep, svc)
			if err != nil {
				return err
			}
			_, err = c.OutOrStdout().Write(y)
			return err
		}),
	}
	fs := c.Flags()
	fs.IntVar(&o.Replicas, "replicas", 1, "simulator replicas")
	fs.StringVar(&o.Name, "name", "knee-sim", "the Deployment's and Service's name")
	fs.StringVar(&o.Namespace, "namespace", "", "their namespace (default: kubectl's)")
	fs.StringVar(&o.Image, "image", defaultImage, "the knee image")
	fs.StringVar(&o.CPU, "cpu", "500m", "CPU request per replica (a request, not a limit: four fit a two-core node)")
	fs.StringVar(&o.InputsConfigMap, "inputs-configmap", "", "a ConfigMap of input files (a models or responses file) mounted read-only at "+kube.InputsDir+": give them after -- as "+kube.InputsDir+"/FILE")
	fs.StringVar(&o.Memory, "memory", "512Mi", "memory request per replica")
	return c
}

// registerSecrets declares the flags that give a shard job's credentials
// from Secrets: none may stand in its arguments.
func registerSecrets(c *cobra.Command, f *kube.SecretFlags) {
	fs := c.Flags()
	fs.StringVar(&f.APIKey, "api-key-secret", "", "the Secret NAME[:KEY] (key default api-key) every pod's API key comes from, as $OPENAI_API_KEY; never give --api-key after --")
	fs.StringArrayVar(&f.Headers, "header-secret", nil, "a request header whose value comes from a Secret, HEADER=NAME[:KEY] (key default: the header, lowercased; repeatable)")
	fs.StringVar(&f.Target, "base-url-secret", "", "the Secret NAME[:KEY] (key default base-url) the API root comes from, instead of --base-url: for a URL that carries a credential")
	fs.StringVar(&f.MetricsURL, "server-metrics-url-secret", "", "the Secret NAME[:KEY] (key default metrics-url) the server's metrics URL comes from")
}
