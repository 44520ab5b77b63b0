// The persistent trie the IPv6 TCAM optimizer works on: a compressed binary
// trie over 64-bit prefixes (route prefixes cut to /64 and the branching points
// of two of them; node 0 is ::/0 and always exists). It lives across commits:
// a route change inserts or removes at most three nodes and reports the path
// from the root, so only the nodes on it need their DP tables redone.
//
// Nodes are 24 bytes in fixed chunks (no reallocation spikes); freed ids are
// reused. What a node holds beyond the shape (colours, flags, table) belongs
// to the optimizer (tcam6_optimizer.cc), which keeps it up to date.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace fibnic::tcam6 {

uint64_t Mask64(int len);

struct Node {
  // Flag bits.
  static constexpr uint8_t kOwn = 1;       // part of the prefix lies outside every child
  static constexpr uint8_t kMixed = 2;     // a /64 whose longer routes disagree with gc: must punt
  static constexpr uint8_t kDirty = 4;     // something in the subtree changed since the last Solve
  static constexpr uint8_t kAns = 8;       // the governing route has an answerable own region here or below
  static constexpr uint8_t kHasKept = 16;  // the TCAM holds an entry here now (the optimizer knows its code)
  static constexpr uint8_t kLong = 32;     // a /64 with routes longer than /64 inside
  static constexpr int kContribShift = 6;  // 2 bits: what this node's own region does for its route

  // 24 bytes: the trie is most of the optimizer's memory, so what only a few
  // nodes have (DP tables, TCAM entries) lives in the optimizer, by node id.
  uint64_t value = 0;
  int32_t child[2] = {-1, -1};
  int32_t route = -1;  // route with exactly this prefix (<= /64), index into the optimizer's routes
  uint8_t len = 0;
  uint8_t gc = 0;      // code of the governing route (nearest at or above); 0: none or a punt route
  uint8_t size = 1;    // nodes in the subtree, capped at 255
  uint8_t flags = 0;

  bool Has(uint8_t f) const { return flags & f; }
  void Set(uint8_t f, bool on) { flags = on ? (flags | f) : (flags & ~f); }
  int contrib() const { return flags >> kContribShift; }
  void set_contrib(int c) { flags = static_cast<uint8_t>((flags & ((1 << kContribShift) - 1)) | (c << kContribShift)); }
  int children() const { return (child[0] >= 0) + (child[1] >= 0); }
};

class Trie {
 public:
  Trie();
  Node& operator[](int id) { return chunks_[id >> kShift][id & kMask]; }
  const Node& operator[](int id) const { return chunks_[id >> kShift][id & kMask]; }

  // The node with exactly this prefix, or -1. path (if given) gets the nodes
  // from the root down to the last one visited.
  int Find(uint64_t value, int len, std::vector<int>* path = nullptr) const;
  // The topmost node inside prefix (value, len), or -1; path as for Find.
  int Topmost(uint64_t value, int len, std::vector<int>* path = nullptr) const;
  // Find for a walk over many prefixes: `path` holds the previous call's path
  // (or nothing) and is kept as far as it contains the prefix, so prefixes
  // given in ascending order (a preorder of the trie) each cost a short walk
  // from their neighbour's node instead of one from the root. The trie must
  // not have changed shape since `path` was filled.
  int FindFrom(uint64_t value, int len, std::vector<int>& path) const;
  // Finds or creates the node for the prefix; path gets the root .. node
  // (every node whose subtree changed). New nodes copy gc from their parent.
  int Insert(uint64_t value, int len, std::vector<int>& path);
  // Removes path.back() if it holds nothing (no route, no longer routes, not
  // the root, < 2 children), and then its parent if that became a branching
  // point with one child. `retire(id)` runs on each node before it is freed;
  // path is cut to the nodes that remain.
  template <typename Fn>
  void Prune(std::vector<int>& path, Fn&& retire);

  size_t node_count() const { return used_ - free_.size(); }
  size_t bytes() const;

 private:
  static constexpr int kShift = 13;
  static constexpr int kMask = (1 << kShift) - 1;
  int Alloc(uint64_t value, int len, uint8_t gc);
  void Free(int id);
  bool Removable(int id) const;
  bool Contains(int id, uint64_t value, int len) const;
  int Down(int cur, uint64_t value, int len, std::vector<int>* path) const;
  std::vector<std::unique_ptr<Node[]>> chunks_;
  size_t used_ = 0;
  std::vector<int32_t> free_;
};

template <typename Fn>
void Trie::Prune(std::vector<int>& path, Fn&& retire) {
  for (int round = 0; round < 2 && path.size() > 1; ++round) {
    const int v = path.back();
    if (!Removable(v)) return;
    Node& parent = (*this)[path[path.size() - 2]];
    const int side = parent.child[0] == v ? 0 : 1;
    Node& n = (*this)[v];
    // A leaf goes; a node with one child is spliced out. A leaf's parent may
    // now be a branching point with one child: the second round takes it.
    parent.child[side] = n.child[0] >= 0 ? n.child[0] : n.child[1];
    retire(v);
    Free(v);
    path.pop_back();
  }
}

}  // namespace fibnic::tcam6
