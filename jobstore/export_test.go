package jobstore

// Followers returns how many Follow subscriptions m holds.
func Followers(m *Manager) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.followers)
}
