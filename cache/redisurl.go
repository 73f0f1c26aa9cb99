package cache

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ParseRedisURL turns a --redis address into go-redis universal options:
//
//	redis://[user:password@]host:port[/db]       a standalone server (rediss:// for TLS)
//	redis+cluster://[user:password@]h1:p1,h2:p2  a Redis Cluster, from any of its nodes
//
// The timeouts are short, so that a Redis that goes away costs a request
// little before the server computes without it.
func ParseRedisURL(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis %q: %v", raw, err)
	}
	o := &redis.UniversalOptions{
		DialTimeout:  500 * time.Millisecond,
		ReadTimeout:  500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond,
		MaxRetries:   1,
	}
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	switch u.Scheme {
	case "redis", "rediss":
		ro, err := redis.ParseURL(raw)
		if err != nil {
			return nil, fmt.Errorf("--redis %q: %v", raw, err)
		}
		o.Addrs, o.DB, o.Username, o.Password, o.TLSConfig = []string{ro.Addr}, ro.DB, ro.Username, ro.Password, ro.TLSConfig
	case "redis+cluster":
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return nil, fmt.Errorf("--redis %q: a cluster has only database 0", raw)
		}
		for _, a := range strings.Split(u.Host, ",") {
			if _, port, ok := strings.Cut(a, ":"); !ok || a == "" || port == "" {
				return nil, fmt.Errorf("--redis %q: node %q is not host:port", raw, a)
			} else if _, err := strconv.Atoi(port); err != nil {
				return nil, fmt.Errorf("--redis %q: node %q has a bad port", raw, a)
			}
			o.Addrs = append(o.Addrs, a)
		}
		o.IsClusterMode = true
	default:
		return nil, fmt.Errorf("--redis %q: use redis://host:port/db or redis+cluster://h1:p1,h2:p2", raw)
	}
	return o, nil
}
