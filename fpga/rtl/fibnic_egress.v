// Egress side of the cut-through pipeline: a fixed delay line (no packet
// buffer) whose output replaces the preamble with the leading port tag and
// rewrites dst/src MAC, TTL/hop limit, IPv4 checksum and FCS in flight.
//   - Frames leave from tap 62 (stream index 0 appears 62 clocks after it
//     arrived) when their record is ready by then — everything but IPv6 —
//     and from tap 74 otherwise (IPv6: its decision completes 12 later).
//   - An IPv6 frame followed by an IPv4 one with less than the 12-byte
//     inter-frame gap would overlap on the output: the second frame is
//     dropped (counted as drop_fifo), as the thesis' forwarding FIFO would.
//   - A frame whose record says R_DROP (a VALID|DROP next-hop entry) is not
//     sent at all: its record is taken at its tap and reported (ev_out with
//     R_DROP) so the CSR counts it in DROP_COUNTERS of its ingress port.
//   - The FCS of a forwarded frame is recomputed over the rewritten bytes and
//     sent complemented if the received FCS was wrong (thesis 5.1.2.3).
// Output: tx_dv/tx_data plus tx_sof/tx_eof marking the tag's first byte and
// the frame's last byte (frames may follow each other without a gap).
module fibnic_egress (
    input  wire        clk,
    input  wire        rst,
    input  wire        rx_dv,
    input  wire [7:0]  rx_data,
    input  wire        rx_end_bad,     // with the first clock after a frame: FCS was wrong
    input  wire        rec_push,
    input  wire [4:0]  rec_reason,
    input  wire [7:0]  rec_in_port,
    input  wire [7:0]  rec_eport,
    input  wire [7:0]  rec_code,
    input  wire [7:0]  rec_tcam,
    input  wire [47:0] rec_dmac,
    input  wire [47:0] rec_smac,
    input  wire [7:0]  rec_ttl,
    input  wire [15:0] rec_csum,
    input  wire        rec_v6,
    output reg         tx_dv,
    output reg  [7:0]  tx_data,
    output reg         tx_sof,
    output reg         tx_eof,
    // Counter events.
    output reg         ev_out,
    output reg  [7:0]  ev_out_port,
    output reg  [4:0]  ev_out_reason,
    output reg         ev_out_drop,
    output reg         ev_tx,
    output reg  [7:0]  ev_tx_port,
    output reg  [15:0] ev_tx_bytes
);
  `include "fibnic_defs.vh"
  `include "fibnic_crc32.vh"

  localparam TAP_A = 62, TAP_B = 74, LEN = TAP_B + 1;
  localparam RECW = 5 + 8 + 8 + 8 + 8 + 48 + 48 + 8 + 16 + 1;

  // ---- delay line -----------------------------------------------------------
  // Packed shift registers; bit/byte k is what entered k+1 clocks ago.
  reg [LEN-1:0]   dl_dv;
  reg [8*LEN-9:0] dl_d;        // data is never read at the last tap
  reg [LEN-1:0]   dl_bad;
  reg [LEN-1:0]   dl_tk;       // this frame already left from tap A

  // ---- record FIFO (one record per frame, frame order) -------------------
  reg [RECW-1:0] fifo [0:7];
  reg [2:0]      wp, rp;
  reg [3:0]      count;
  wire [RECW-1:0] head = fifo[rp];
  wire have_rec = count != 4'd0;

  // ---- taps -----------------------------------------------------------------
  wire sof_a = dl_dv[TAP_A-1] && !dl_dv[TAP_A];
  wire sof_b = dl_dv[TAP_B-1] && !dl_dv[TAP_B] && !dl_tk[TAP_B-1];
  wire start_req = (sof_a || sof_b) && have_rec;
  wire start_b = sof_b;

  reg         act, from_b;
  reg [10:0]  ob;                // output byte index of the active frame (0 = tag byte 0)
  reg [RECW-1:0] rec;
  reg [31:0]  crc;
  reg [1:0]   fcs_n;             // FCS bytes already sent
  reg [23:0]  fcs_rest;

  wire cur_dv  = from_b ? dl_dv[TAP_B-1] : dl_dv[TAP_A-1];
  wire [7:0] cur_d = from_b ? dl_d[8*(TAP_B-1) +: 8] : dl_d[8*(TAP_A-1) +: 8];
  wire next_dv = from_b ? dl_dv[TAP_B-2] : dl_dv[TAP_A-2];
  wire la4_dv  = from_b ? dl_dv[TAP_B-5] : dl_dv[TAP_A-5];
  wire la4_bad = from_b ? dl_bad[TAP_B-5] : dl_bad[TAP_A-5];
  wire busy = act && cur_dv;
  wire discard = head[RECW-1 -: 5] == R_DROP;   // the route drops it: nothing goes out
  wire start = start_req && !busy && !discard;
  wire drop = start_req && busy && !discard;    // lost to the overlap (drop_fifo)

  // Record fields of the frame being sent.
  wire [4:0]  r_reason = rec[RECW-1 -: 5];
  wire [7:0]  r_in     = rec[RECW-6 -: 8];
  wire [7:0]  r_eport  = rec[RECW-14 -: 8];
  wire [7:0]  r_code   = rec[RECW-22 -: 8];
  wire [7:0]  r_tcam   = rec[RECW-30 -: 8];
  wire [47:0] r_dmac   = rec[RECW-38 -: 48];
  wire [47:0] r_smac   = rec[RECW-86 -: 48];
  wire [7:0]  r_ttl    = rec[RECW-134 -: 8];
  wire [15:0] r_csum   = rec[RECW-142 -: 16];
  wire        r_v6     = rec[0];
  wire        r_fwd    = r_reason == R_FORWARD;

  // The byte the active frame sends now.
  reg [7:0] out;
  reg       in_fcs;
  reg [31:0] fcs_now;
  wire [10:0] fo = ob - 11'd8;   // frame offset
  always @(*) begin
    out = cur_d;
    in_fcs = 1'b0;
    fcs_now = (la4_bad ? crc : ~crc);
    if (ob < 11'd8) begin
      case (ob[2:0])
        3'd0: out = r_fwd ? r_eport : 8'h80;
        3'd1: out = {3'd0, r_reason};
        3'd2: out = r_in;
        3'd3: out = r_code;
        3'd4: out = r_tcam;
        3'd7: out = 8'hD5;
        default: out = 8'h00;
      endcase
    end else if (r_fwd) begin
      if (fcs_n != 2'd0) begin
        in_fcs = 1'b1;
        out = fcs_rest[7:0];
      end else if (!la4_dv) begin
        in_fcs = 1'b1;
        out = fcs_now[7:0];
      end else if (fo < 11'd6) out = r_dmac[8 * (3'd5 - fo[2:0]) +: 8];
      else if (fo < 11'd12) out = r_smac[8 * (4'd11 - fo[3:0]) +: 8];
      else if (!r_v6 && fo == 11'd22) out = r_ttl;
      else if (!r_v6 && fo == 11'd24) out = r_csum[15:8];
      else if (!r_v6 && fo == 11'd25) out = r_csum[7:0];
      else if (r_v6 && fo == 11'd21) out = r_ttl;
    end
  end

  always @(posedge clk) begin
    // Delay line.
    dl_dv <= {dl_dv[LEN-2:0], rx_dv};
    dl_d <= {dl_d[8*LEN-17:0], rx_data};
    dl_bad <= {dl_bad[LEN-2:0], rx_end_bad};
    // A frame handled at tap A (started or dropped) is never taken again at B.
    dl_tk <= {dl_tk[LEN-2:0], 1'b0} | ({{(LEN-1){1'b0}}, sof_a && have_rec} << TAP_A);

    ev_out <= 1'b0;
    ev_tx <= 1'b0;
    tx_dv <= 1'b0;
    tx_sof <= 1'b0;
    tx_eof <= 1'b0;
    if (rst) begin
      dl_dv <= {LEN{1'b0}};
      dl_tk <= {LEN{1'b0}};
      wp <= 3'd0;
      rp <= 3'd0;
      count <= 4'd0;
      act <= 1'b0;
      from_b <= 1'b0;
    end else begin
      // Record FIFO.
      if (rec_push) begin
        fifo[wp] <= {rec_reason, rec_in_port, rec_eport, rec_code, rec_tcam, rec_dmac, rec_smac,
                     rec_ttl, rec_csum, rec_v6};
        wp <= wp + 3'd1;
      end
      if (start_req) rp <= rp + 3'd1;
      count <= count + {3'd0, rec_push} - {3'd0, start_req};

      if (start_req) begin
        ev_out <= 1'b1;
        ev_out_port <= head[RECW-6 -: 8];
        ev_out_reason <= head[RECW-1 -: 5];
        ev_out_drop <= drop;
      end

      if (act && !cur_dv) act <= 1'b0;
      if (busy) begin
        tx_dv <= 1'b1;
        tx_data <= out;
        tx_eof <= !next_dv;
        ob <= ob + 11'd1;
        if (ob >= 11'd8 && !in_fcs) crc <= crc32_byte(crc, out);
        if (in_fcs) begin
          fcs_n <= fcs_n + 2'd1;
          fcs_rest <= (fcs_n == 2'd0) ? fcs_now[31:8] : {8'd0, fcs_rest[23:8]};
        end
        if (!next_dv && r_fwd) begin
          ev_tx <= 1'b1;
          ev_tx_port <= r_eport;
          ev_tx_bytes <= {5'd0, fo} + 16'd1;
        end
      end else if (start) begin
        act <= 1'b1;
        from_b <= start_b;
        rec <= head;
        ob <= 11'd1;
        crc <= 32'hFFFFFFFF;
        fcs_n <= 2'd0;
        tx_dv <= 1'b1;
        tx_sof <= 1'b1;
        tx_eof <= 1'b0;
        tx_data <= (head[RECW-1 -: 5] == R_FORWARD) ? head[RECW-14 -: 8] : 8'h80;
      end
    end
  end
endmodule
