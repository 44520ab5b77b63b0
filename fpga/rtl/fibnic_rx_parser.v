// Ingress side of the cut-through pipeline: counts the stream bytes of a
// frame (index 0 = first preamble byte, 8 = first byte of the destination
// MAC, as in thesis fig. 5.5) and latches the header fields the decision
// needs as they fly past. It also runs the receive CRC and says when the
// decision may start ("fire"):
//   - stream index 42 for everything but IPv6: the IPv4 destination (frame
//     bytes 30..33) arrived with index 41 (thesis: 42 cycles to the address);
//   - stream index 54 for IPv6: the first 64 bits of the destination (frame
//     bytes 38..45) arrived with index 53 (thesis: IPv6 + 12);
//   - or when the frame ends before that (it is then decided on what arrived).
module fibnic_rx_parser (
    input  wire         clk,
    input  wire         rst,
    input  wire         rx_dv,
    input  wire [7:0]   rx_data,
    input  wire [7:0]   rx_port,       // sampled with the first preamble byte
    output reg  [7:0]   in_port,
    output reg          in_frame,      // a frame's bytes are arriving
    output wire         end_now,       // first clock after the frame's last byte
    output reg  [10:0]  flen,          // frame bytes (after the SFD) received so far
    output wire         fire,          // start the decision for this frame now
    output wire         fire_ended,    // ... and the frame has already ended
    output wire         crc_ok,        // at end_now: the FCS was right
    // Header fields (valid once their bytes arrived, see the fire points).
    output reg  [47:0]  dmac,
    output reg  [15:0]  etype,
    output reg  [7:0]   ip_b0,         // IPv4 version/IHL, IPv6 version/class
    output reg  [7:0]   v4_ttl,
    output reg  [7:0]   v4_proto,
    output reg  [15:0]  v4_csum,
    output reg  [19:0]  v4_sum,        // plain sum of the 10 header words
    output reg  [31:0]  v4_dst,
    output reg  [7:0]   v6_next,
    output reg  [7:0]   v6_hop,
    output reg  [127:0] v6_dst
);
  `include "fibnic_crc32.vh"

  localparam [6:0] FIRE_V4 = 7'd42, FIRE_V6 = 7'd54;

  reg  [6:0]  idx;      // stream index of the byte on rx_data (saturates)
  reg         fired;
  reg  [31:0] crc;
  wire        sof = rx_dv && !in_frame;
  wire [6:0]  cur = sof ? 7'd0 : idx;
  wire        take = rx_dv;                      // byte at index cur arrives
  wire        is_v6 = (flen >= 11'd14) && etype == 16'h86DD;
  wire [6:0]  fire_at = is_v6 ? FIRE_V6 : FIRE_V4;

  assign end_now = in_frame && !rx_dv;
  assign fire = !fired && !sof && (cur == fire_at || end_now);
  assign fire_ended = end_now || !in_frame;
  assign crc_ok = crc == CRC_RESIDUE;

  always @(posedge clk) begin
    if (rst) begin
      in_frame <= 1'b0;
      idx <= 7'h7f;
      fired <= 1'b1;
      flen <= 11'd0;
    end else begin
      in_frame <= rx_dv;
      if (idx != 7'h7f || sof) idx <= cur + 7'd1;
      if (fire) fired <= 1'b1;
      if (sof) begin
        fired <= 1'b0;
        flen <= 11'd0;
        in_port <= rx_port;
        crc <= 32'hFFFFFFFF;
        v4_sum <= 20'd0;
      end
      if (take && cur >= 7'd8) begin
        if (flen != 11'h7ff) flen <= flen + 11'd1;
        crc <= crc32_byte(crc, rx_data);
      end
      if (take && !cur[6] && cur >= 7'd8 && cur < 7'd14) dmac[8 * (7'd13 - cur) +: 8] <= rx_data;
      if (take && cur == 7'd20) etype[15:8] <= rx_data;
      if (take && cur == 7'd21) etype[7:0] <= rx_data;
      if (take && cur == 7'd22) ip_b0 <= rx_data;
      if (take && cur >= 7'd22 && cur <= 7'd41)
        v4_sum <= v4_sum + (cur[0] ? {12'd0, rx_data} : {4'd0, rx_data, 8'd0});  // odd offset = low byte
      if (take && cur == 7'd30) v4_ttl <= rx_data;
      if (take && cur == 7'd31) v4_proto <= rx_data;
      if (take && cur == 7'd32) v4_csum[15:8] <= rx_data;
      if (take && cur == 7'd33) v4_csum[7:0] <= rx_data;
      if (take && cur >= 7'd38 && cur <= 7'd41) v4_dst[8 * (7'd41 - cur) +: 8] <= rx_data;
      if (take && cur == 7'd28) v6_next <= rx_data;
      if (take && cur == 7'd29) v6_hop <= rx_data;
      if (take && cur >= 7'd46 && cur <= 7'd61) v6_dst[8 * (7'd61 - cur) +: 8] <= rx_data;
    end
  end
endmodule
