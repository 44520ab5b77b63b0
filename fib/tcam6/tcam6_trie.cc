#include "fib/tcam6/tcam6_trie.h"

#include <algorithm>
#include <bit>

namespace fibnic::tcam6 {

uint64_t Mask64(int len) { return len == 0 ? 0 : ~uint64_t{0} << (64 - len); }

namespace {
int BitAt(uint64_t v, int pos) { return static_cast<int>((v >> (63 - pos)) & 1); }
}  // namespace

static_assert(sizeof(Node) == 24);

Trie::Trie() { Alloc(0, 0, 0); }

int Trie::Alloc(uint64_t value, int len, uint8_t gc) {
  int id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    if ((used_ & kMask) == 0) chunks_.push_back(std::make_unique<Node[]>(size_t{1} << kShift));
    id = static_cast<int>(used_++);
  }
  Node& n = (*this)[id];
  n = Node{};
  n.value = value & Mask64(len);
  n.len = static_cast<uint8_t>(len);
  n.gc = gc;
  n.flags = Node::kDirty;
  return id;
}

void Trie::Free(int id) {
  (*this)[id] = Node{};
  free_.push_back(id);
}

bool Trie::Removable(int id) const {
  const Node& n = (*this)[id];
  return id != 0 && n.route < 0 && !n.Has(Node::kLong) && n.children() < 2;
}

int Trie::Find(uint64_t value, int len, std::vector<int>* path) const {
  const int v = Topmost(value, len, path);
  return v >= 0 && (*this)[v].len == len ? v : -1;
}

int Trie::Topmost(uint64_t value, int len, std::vector<int>* path) const {
  if (path) path->clear();
  return Down(0, value & Mask64(len), len, path);
}

int Trie::FindFrom(uint64_t value, int len, std::vector<int>& path) const {
  value &= Mask64(len);
  while (!path.empty() && !Contains(path.back(), value, len)) path.pop_back();
  int cur = 0;
  if (!path.empty()) {
    cur = path.back();
    path.pop_back();  // Down pushes it again
  }
  const int v = Down(cur, value, len, &path);
  return v >= 0 && (*this)[v].len == len ? v : -1;
}

// Whether node id's prefix holds the prefix (value, len).
bool Trie::Contains(int id, uint64_t value, int len) const {
  const Node& n = (*this)[id];
  return n.len <= len && ((value ^ n.value) & Mask64(n.len)) == 0;
}

// Topmost's walk from cur (the root or a node holding the prefix); value has
// no bits past len.
int Trie::Down(int cur, uint64_t value, int len, std::vector<int>* path) const {
  while (true) {
    const Node& n = (*this)[cur];
    if (!Contains(cur, value, len)) {
      // Below the prefix (cur is inside it) or off it.
      return (n.value & Mask64(len)) == value && n.len >= len ? cur : -1;
    }
    if (path) path->push_back(cur);
    if (n.len == len) return cur;
    const int c = n.child[BitAt(value, n.len)];
    if (c < 0) return -1;
    cur = c;
  }
}

int Trie::Insert(uint64_t v, int len, std::vector<int>& path) {
  v &= Mask64(len);
  path.assign(1, 0);
  int cur = 0;
  while (true) {
    if ((*this)[cur].len == len) return cur;
    const int b = BitAt(v, (*this)[cur].len);
    const int c = (*this)[cur].child[b];
    const uint8_t gc = (*this)[cur].gc;
    if (c < 0) {
      const int id = Alloc(v, len, gc);
      (*this)[cur].child[b] = id;
      path.push_back(id);
      return id;
    }
    const uint64_t cv = (*this)[c].value;
    const int clen = (*this)[c].len;
    const int common = std::min({clen, len, std::countl_zero(cv ^ v)});
    if (common == clen) {
      cur = c;
      path.push_back(cur);
      continue;
    }
    if (common == len) {  // the new prefix sits between cur and c
      const int id = Alloc(v, len, gc);
      (*this)[id].child[BitAt(cv, len)] = c;
      (*this)[cur].child[b] = id;
      path.push_back(id);
      return id;
    }
    const int mid = Alloc(v, common, gc);
    const int id = Alloc(v, len, gc);
    (*this)[mid].child[BitAt(cv, common)] = c;
    (*this)[mid].child[BitAt(v, common)] = id;
    (*this)[cur].child[b] = mid;
    path.push_back(mid);
    path.push_back(id);
    return id;
  }
}

size_t Trie::bytes() const {
  return chunks_.size() * (sizeof(Node) << kShift) + free_.capacity() * sizeof(int32_t) +
         chunks_.capacity() * sizeof(void*);
}

}  // namespace fibnic::tcam6
