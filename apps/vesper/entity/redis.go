package entity

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCache is a Cache in Redis, for several replicas sharing resolutions.
type RedisCache struct {
	c      redis.UniversalClient
	prefix string
}

// NewRedisCache wraps a client; prefix is put before every key (default "vesper:").
func NewRedisCache(c redis.UniversalClient, prefix string) *RedisCache {
	if prefix == "" {
		prefix = "vesper:"
	}
	return &RedisCache{c: c, prefix: prefix}
}

// Get implements Cache.
func (r *RedisCache) Get(ctx context.Context, key string) (string, bool, error) {
	v, err := r.c.Get(ctx, r.prefix+key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

// Set implements Cache.
func (r *RedisCache) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	return r.c.Set(ctx, r.prefix+key, value, ttl).Err()
}
