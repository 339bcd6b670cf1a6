package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/etcdstore"
)

// maxEtcdLease bounds --etcd-lease: the longest a crashed leader leaves
// the store without one.
const maxEtcdLease = time.Minute

// etcdFlags are serve's flags of the store on etcd (--store etcd://...).
type etcdFlags struct {
	store, ca, cert, key, user, passwordFile, prefix string
	lease                                            time.Duration
}

func (f *etcdFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.store, "store", "", "keep the store highly available in etcd at `etcd://HOST:PORT[,HOST:PORT...]`: several serve processes on one --broker, one leader answers, the others are hot standbys (docs/ha.md); needs --broker, excludes --data-dir, --persist-all, --repair, --direct-commits, --seed, --http, --ui (no console, /metrics, /healthz, /readyz) and --clock manual")
	fs.StringVar(&f.ca, "etcd-ca-file", "", "with --store: connect to etcd over TLS, trusting the PEM CA bundle in `FILE`")
	fs.StringVar(&f.cert, "etcd-cert-file", "", "with --store: the PEM client certificate `FILE` presented to etcd (needs --etcd-key-file)")
	fs.StringVar(&f.key, "etcd-key-file", "", "with --store: the `FILE` of --etcd-cert-file's PEM private key")
	fs.StringVar(&f.user, "etcd-user", "", "with --store: authenticate to etcd as `USER`; the password comes from SSGEN_ETCD_PASSWORD or --etcd-password-file")
	fs.StringVar(&f.passwordFile, "etcd-password-file", "", "with --etcd-user: read the etcd password from the first line of `FILE`")
	fs.DurationVar(&f.lease, "etcd-lease", etcdstore.DefaultLeaseTTL, "with --store: the leader's etcd lease, whole seconds from 2s to 1m: a leader that dies without resigning is replaced about this long after; shorter means faster failovers, and a leader whose etcd does not answer for that long steps down")
	fs.StringVar(&f.prefix, "etcd-prefix", etcdstore.DefaultPrefix, "with --store: the etcd key `PREFIX` the store lives under; one store per broker: different prefixes are for stores on different brokers sharing one etcd, and none may start another (/ alone is refused)")
}

// check reports the flags that need --store or exclude it.
func (f *etcdFlags) check(given map[string]bool) error {
	if f.store == "" {
		for _, name := range []string{"etcd-ca-file", "etcd-cert-file", "etcd-key-file", "etcd-user", "etcd-password-file", "etcd-prefix", "etcd-lease"} {
			if given[name] {
				return usageErrorf("--%s needs --store etcd://HOST:PORT", name)
			}
		}
		return nil
	}
	if !given["broker"] {
		return usageErrorf("--store etcd:// needs --broker: every instance attaches to the same MQTT broker, and only the leader answers")
	}
	for _, name := range []string{"data-dir", "persist-all", "repair", "direct-commits", "seed", "http", "ui"} {
		if given[name] {
			return usageErrorf("--store etcd:// excludes --%s", name)
		}
	}
	if (f.cert == "") != (f.key == "") {
		return usageErrorf("--etcd-cert-file and --etcd-key-file go together")
	}
	if f.passwordFile != "" && f.user == "" {
		return usageErrorf("--etcd-password-file needs --etcd-user")
	}
	if f.prefix == "" {
		return usageErrorf("--etcd-prefix must not be empty")
	}
	if f.lease < etcdstore.MinLeaseTTL || f.lease > maxEtcdLease || f.lease%time.Second != 0 {
		return usageErrorf("--etcd-lease %v: want whole seconds from %v (etcd's shortest lease with default settings) to %v (a leader that dies is replaced only that long after)", f.lease, etcdstore.MinLeaseTTL, maxEtcdLease)
	}
	return nil
}

// config builds the node's configuration.
func (f *etcdFlags) config(env *cliEnv) (etcdstore.Config, error) {
	var cfg etcdstore.Config
	eps, err := etcdstore.ParseURL(f.store)
	if err != nil {
		return cfg, usageErrorf("--store: %v", err)
	}
	cfg.Endpoints, cfg.Prefix, cfg.Username, cfg.LeaseTTL = eps, f.prefix, f.user, f.lease
	if f.user != "" {
		cfg.Password = env.getenv("SSGEN_ETCD_PASSWORD")
		if f.passwordFile != "" {
			data, err := os.ReadFile(f.passwordFile)
			if err != nil {
				return cfg, usageErrorf("--etcd-password-file: %v", err)
			}
			cfg.Password, _, _ = strings.Cut(string(data), "\n")
			cfg.Password = strings.TrimSuffix(cfg.Password, "\r")
		}
	}
	if f.ca != "" || f.cert != "" {
		t := &tls.Config{MinVersion: tls.VersionTLS12}
		if f.ca != "" {
			pem, err := os.ReadFile(f.ca)
			if err != nil {
				return cfg, usageErrorf("--etcd-ca-file: %v", err)
			}
			t.RootCAs = x509.NewCertPool()
			if !t.RootCAs.AppendCertsFromPEM(pem) {
				return cfg, usageErrorf("--etcd-ca-file %s: no PEM certificate", f.ca)
			}
		}
		if f.cert != "" {
			c, err := tls.LoadX509KeyPair(f.cert, f.key)
			if err != nil {
				return cfg, usageErrorf("--etcd-cert-file: %v", err)
			}
			t.Certificates = []tls.Certificate{c}
		}
		cfg.TLS = t
	}
	return cfg, nil
}

// serveEtcd runs serve with --store etcd://: a node that stands by and
// leads in turn until ctx ends.
func serveEtcd(ctx context.Context, env *cliEnv, f *etcdFlags, opts server.Options, logger *slog.Logger) error {
	cfg, err := f.config(env)
	if err != nil {
		return err
	}
	cfg.Server, cfg.Logger = opts, logger
	node, err := etcdstore.Open(cfg)
	if err != nil {
		return &exitError{code: exitUsage, err: libErr(err)}
	}
	// Clients use the broker's address whichever instance leads.
	fmt.Fprintln(env.stdout, opts.Broker)
	err = node.Run(ctx)
	logger.Info("shutting down")
	if err != nil {
		return &exitError{code: exitUsage, err: libErr(err)}
	}
	return nil
}
