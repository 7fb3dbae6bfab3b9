package backoff

import "time"

// Policy configures retries.
type Policy struct {
	Base time.Duration
	Max  time.Duration
}

// Next returns the next delay.
func (p *Policy) Next(attempt int) time.Duration {
	d := p.Base << attempt
	if d > p.Max {
		return p.Max
	}
	return d
}

func New() *Policy {
	return &Policy{Base: time.Second, Max: time.Minute}
}
