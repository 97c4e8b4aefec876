package clusterconfig

import (
	"slices"
	"strings"
)

// OutboxDrivers are the databases outbox.driver names, as kuebus-outbox's
// --driver takes them.
var OutboxDrivers = []string{"postgres", "mysql", "sqlite"}

// Outbox is the outbox role's section (docs/outbox.md): while the node
// leads the ring, it runs `kuebus-outbox relay` on this database, and
// stops it when it no longer leads.
type Outbox struct {
	// Driver is the database: postgres, mysql (MariaDB too) or sqlite.
	// Required with the outbox role.
	Driver string `yaml:"driver"`
	// DSN is the database's DSN, as its Go driver takes it. Required with
	// the outbox role; prefer the variable, KUEBUS_OUTBOX_DSN, for one with
	// a password.
	DSN string `yaml:"dsn"`
	// Binary is the kuebus-outbox executable. Default: the one next to the
	// node's own executable, else the one on PATH.
	Binary string `yaml:"binary"`
	// Args are more flags for the relay (--batch-size 200,
	// --metrics-addr 127.0.0.1:9464). Default: none.
	Args []string `yaml:"args"`
}

func (v *validator) outbox() {
	c := v.c
	o := c.Outbox
	if c.Has(RoleOutbox) && !c.Has(RolePromoter) {
		v.fail("roles", "the outbox role runs on the ring's leader: add the promoter role")
	}
	if !slices.Contains(OutboxDrivers, o.Driver) {
		v.fail("outbox.driver", "%q is not %s", o.Driver, strings.Join(OutboxDrivers, ", "))
	}
	if o.DSN == "" {
		v.fail("outbox.dsn", "required with the outbox role: the database's DSN")
	}
	for _, a := range o.Args {
		for _, own := range []string{"--driver", "--dsn", "--nats-url", "--prefix"} {
			if a == own || strings.HasPrefix(a, own+"=") || a == own[1:] || strings.HasPrefix(a, own[1:]+"=") {
				v.fail("outbox.args", "%s is the node's to set (outbox.driver, outbox.dsn, its NATS and prefix)", own)
			}
		}
	}
	if e := c.NATS.Embedded; e != nil && c.Has(RoleNATS) && len(e.Users) > 0 && e.Token == "" {
		// The relay is a process of its own, so it logs in over TCP:
		// with a token the node hands it; user logins it cannot pick.
		v.fail("outbox", "the relay logs in to the embedded NATS with nats.embedded.token, and this locked server has users only: set a token as well")
	}
}
