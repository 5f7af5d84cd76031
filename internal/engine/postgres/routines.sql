-- The five TPC-C transactions as PL/pgSQL functions (tierbench's "routines"
-- mode): a worker runs each with one round trip, and each call is one
-- database transaction (autocommit), so pg_stat_database counts it once, as
-- HammerDB's stored procedures are counted. Clause numbers refer to TPC-C
-- 5.11. Functions are LANGUAGE plpgsql even where one statement would do:
-- PL/pgSQL caches its plans per session, a non-inlined SQL function plans
-- its body on every call.
--
-- Installing drops every earlier version first, so that a changed signature
-- or return type never leaves a stale overload behind.
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
      WHERE p.pronamespace = current_schema()::regnamespace
        AND p.proname IN ('tpcc_routines_version', 'tpcc_stock_quantity', 'tpcc_customer_by_name',
                          'tpcc_new_order', 'tpcc_payment',
                          'tpcc_order_status', 'tpcc_delivery', 'tpcc_stock_level') LOOP
    EXECUTE 'DROP FUNCTION ' || f;
  END LOOP;
END $$;

-- The version a worker checks before it runs anything (routinesVersion in
-- runner.go): bump both when a signature, a result or what a routine does
-- changes.
CREATE OR REPLACE FUNCTION tpcc_routines_version() RETURNS int
LANGUAGE sql IMMUTABLE AS 'SELECT 2';

-- 2.5.2.2 and 2.6.2.2: a customer chosen by last name is the one at
-- position ceil(n/2) of the n customers of that name in the district, sorted
-- by C_FIRST. Payment and Order-Status both select this way.
CREATE OR REPLACE FUNCTION tpcc_customer_by_name(p_w int, p_d int, p_c_last text) RETURNS int
LANGUAGE plpgsql STABLE AS $$
DECLARE v_ids int[]; v_n int;
BEGIN
  SELECT array_agg(c_id ORDER BY c_first) INTO v_ids
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_c_last;
  v_n := coalesce(cardinality(v_ids), 0);
  IF v_n = 0 THEN
    RAISE EXCEPTION 'no customer named % in district % of warehouse %', p_c_last, p_d, p_w;
  END IF;
  RETURN v_ids[(v_n + 1) / 2];
END $$;

-- 2.4.2.2: S_QUANTITY after ordering each of qs in turn from one stock row:
-- if S_QUANTITY >= OL_QUANTITY + 10 it drops by OL_QUANTITY, else it drops by
-- OL_QUANTITY and is refilled by 91. Only used when an order names the same
-- (supply warehouse, item) twice or more; one line is done inline.
CREATE OR REPLACE FUNCTION tpcc_stock_quantity(s int, qs int[]) RETURNS int
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE q int;
BEGIN
  FOREACH q IN ARRAY qs LOOP
    IF s >= q + 10 THEN s := s - q; ELSE s := s - q + 91; END IF;
  END LOOP;
  RETURN s;
END $$;

-- New-Order (2.4). Lines come as three parallel arrays in input order
-- (ol_number = position). An unused item (2.4.1.4, always the last line)
-- raises SQLSTATE TB001 with the order number in DETAIL: the call's
-- transaction rolls back (counted in xact_rollback) and the client reports
-- a completed, rolled-back New-Order (2.4.2.3).
CREATE OR REPLACE FUNCTION tpcc_new_order(
  p_w int, p_d int, p_c int, p_all_local int,
  p_items int[], p_supply int[], p_qty int[],
  OUT new_o_id int, OUT total_cents bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_n int := cardinality(p_items);
  v_w_tax numeric; v_d_tax numeric;
  v_discount numeric; v_last text; v_credit text;
  v_price numeric[];
  v_rows int; v_sum numeric;
BEGIN
  -- 2.4.2.2: W_TAX; D_TAX and D_NEXT_O_ID, incremented. The district row
  -- lock serializes the New-Orders of a district, so order numbers are
  -- handed out without gaps (3.3.2.2) and commit in order.
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_next_o_id = d_next_o_id + 1
   WHERE d_w_id = p_w AND d_id = p_d
  RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, new_o_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'district % of warehouse % does not exist', p_d, p_w;
  END IF;
  SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'customer % of district % of warehouse % does not exist', p_c, p_d, p_w;
  END IF;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (new_o_id, p_d, p_w, p_c, now(), NULL, v_n, p_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (new_o_id, p_d, p_w);

  -- 2.4.2.2: each line's I_PRICE (I_NAME and I_DATA only feed the screen
  -- and the brand-generic flag, which is not stored). All items are looked
  -- up before any stock is touched: the effect is the same as line by line,
  -- and a rolled-back order takes no stock locks.
  SELECT array_agg(i.i_price ORDER BY l.n) INTO v_price
    FROM unnest(p_items) WITH ORDINALITY AS l(id, n) JOIN item i ON i.i_id = l.id;
  IF coalesce(cardinality(v_price), 0) < v_n THEN
    -- 2.4.2.3: "Item number is not valid"; everything above rolls back.
    RAISE EXCEPTION USING ERRCODE = 'TB001', MESSAGE = 'Item number is not valid', DETAIL = new_o_id::text;
  END IF;

  -- 2.4.2.2: per stock row, S_QUANTITY as above, S_YTD += OL_QUANTITY,
  -- S_ORDER_CNT += 1, S_REMOTE_CNT += 1 for a remote line; per line,
  -- OL_AMOUNT = OL_QUANTITY * I_PRICE and OL_DIST_INFO = S_DIST_xx of the
  -- order's district. Lines naming the same stock row are grouped so the row
  -- is updated once, in ol_number order. The groups come sorted by (supply
  -- warehouse, item) and drive a nested loop over stock_pkey, so the rows
  -- are updated, and locked, in that order: concurrent New-Orders never
  -- wait on each other in a cycle (a deadlock costs a second of
  -- deadlock_timeout), without a separate locking pass over the rows.
  WITH l AS (
    SELECT * FROM unnest(p_items, p_supply, p_qty, v_price) WITH ORDINALITY AS l(id, w, q, price, n)),
  g AS (
    SELECT w, id, count(*)::int AS cnt, sum(q)::int AS sq, array_agg(q ORDER BY n) AS qs FROM l
     GROUP BY w, id ORDER BY w, id),
  s AS (
    UPDATE stock SET
      s_quantity = CASE WHEN g.cnt > 1 THEN tpcc_stock_quantity(s_quantity, g.qs)
                        WHEN s_quantity >= g.sq + 10 THEN s_quantity - g.sq
                        ELSE s_quantity - g.sq + 91 END,
      s_ytd = s_ytd + g.sq,
      s_order_cnt = s_order_cnt + g.cnt,
      s_remote_cnt = s_remote_cnt + CASE WHEN g.w <> p_w THEN g.cnt ELSE 0 END
    FROM g WHERE s_w_id = g.w AND s_i_id = g.id
    RETURNING s_w_id, s_i_id, CASE p_d
      WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
      WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
      WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist),
  ins AS (
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
    SELECT new_o_id, p_d, p_w, l.n, l.id, l.w, NULL, l.q, l.q * l.price, s.dist
      FROM l JOIN s ON s.s_w_id = l.w AND s.s_i_id = l.id
    RETURNING ol_amount)
  SELECT count(*), sum(ol_amount) INTO v_rows, v_sum FROM ins;
  IF v_rows <> v_n THEN
    RAISE EXCEPTION 'stock rows missing: % of % order lines written', v_rows, v_n;
  END IF;

  -- 2.4.2.2: total = sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX).
  total_cents := round(v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax) * 100)::bigint;
END $$;

-- Payment (2.5). p_c_id = 0 selects the customer by p_c_last: of the
-- matching customers sorted by C_FIRST, the one at position ceil(n/2)
-- (2.5.2.2). Returns the customer's C_ID.
CREATE OR REPLACE FUNCTION tpcc_payment(
  p_w int, p_d int, p_cw int, p_cd int, p_c_id int, p_c_last text, p_amount_cents bigint)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  v_amount numeric(6,2) := p_amount_cents * 0.01; -- exact: cents times 0.01
  v_c int := p_c_id;
  v_w record; v_d record; v_cust record;
BEGIN
  -- 2.5.2.2: D_YTD and, below, W_YTD grow by H_AMOUNT; names and
  -- addresses go to the screen.
  UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w AND d_id = p_d
  RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_d;
  IF NOT FOUND THEN RAISE EXCEPTION 'district % of warehouse % does not exist', p_d, p_w; END IF;

  IF v_c = 0 THEN
    v_c := tpcc_customer_by_name(p_cw, p_cd, p_c_last);
  END IF;

  -- C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT, C_PAYMENT_CNT += 1; a
  -- bad-credit customer's C_DATA gets (C_ID, C_D_ID, C_W_ID, D_ID, W_ID,
  -- H_AMOUNT) in front, cut to 500 characters.
  UPDATE customer SET
    c_balance = c_balance - v_amount,
    c_ytd_payment = c_ytd_payment + v_amount,
    c_payment_cnt = c_payment_cnt + 1,
    c_data = CASE WHEN c_credit = 'BC'
      THEN left(format('%s %s %s %s %s %s | ', c_id, c_d_id, c_w_id, p_d, p_w, v_amount) || c_data, 500)
      ELSE c_data END
  WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c
  RETURNING c_first, c_middle, c_last, c_credit, c_credit_lim, c_discount, c_balance INTO v_cust;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'customer % of district % of warehouse % does not exist', v_c, p_cd, p_cw;
  END IF;

  -- The warehouse row last: every Payment of the warehouse updates it, and
  -- holds its lock until the commit is flushed, so it is taken when all
  -- that is left is HISTORY's insert and the commit. Taken first, it was
  -- held through the waits for the district and customer rows too. In 6
  -- alternating 20 s pairs (2 warehouses, 4 VUs, durable commits) the wait
  -- for it fell by 19–36%, and Payment's time by 7–19% in 5 of them (the
  -- sixth: 3% slower). Whoever holds it waits for nothing more, so
  -- Payments still never wait on each other in a cycle.
  UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w
  RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_w;
  IF NOT FOUND THEN RAISE EXCEPTION 'warehouse % does not exist', p_w; END IF;

  -- H_DATA = W_NAME, four spaces, D_NAME.
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (v_c, p_cd, p_cw, p_d, p_w, now(), v_amount, v_w.w_name || '    ' || v_d.d_name);
  RETURN v_c;
END $$;

-- Order-Status (2.6), read-only. STABLE: every query of the call reads the
-- one snapshot of the calling statement, so the customer, the latest order
-- and its lines are consistent with each other (level 3 against New-Order,
-- 3.4.1). p_c_id = 0 selects by name as Payment does.
CREATE OR REPLACE FUNCTION tpcc_order_status(
  p_w int, p_d int, p_c_id int, p_c_last text,
  OUT out_c_id int, OUT out_o_id int, OUT out_lines int)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_cust record; v_ord record; v_line record;
BEGIN
  out_c_id := p_c_id;
  IF out_c_id = 0 THEN
    out_c_id := tpcc_customer_by_name(p_w, p_d, p_c_last);
  END IF;
  SELECT c_balance, c_first, c_middle, c_last INTO v_cust
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = out_c_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'customer % of district % of warehouse % does not exist', out_c_id, p_d, p_w;
  END IF;

  -- 2.6.2.2: the customer's order with the largest O_ID (orders_customer_idx).
  SELECT o_id, o_entry_d, o_carrier_id INTO v_ord
    FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = out_c_id
   ORDER BY o_id DESC LIMIT 1;
  out_lines := 0;
  IF NOT FOUND THEN
    out_o_id := 0;
    RETURN;
  END IF;
  out_o_id := v_ord.o_id;
  FOR v_line IN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
      FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = out_o_id LOOP
    out_lines := out_lines + 1;
  END LOOP;
END $$;

-- Delivery (2.7), all ten districts in one transaction. Returns the order
-- delivered per district, 0 for a district with nothing to deliver (skipped,
-- 2.7.4.2). A second Delivery of the warehouse waits for the first's row
-- rather than skip it (SKIP LOCKED would take the next-oldest order, and if
-- the first then rolled back, the district's undelivered orders would have
-- a gap: 3.3.2.3 fails). Once the first commits, the locking subquery goes
-- on to the next row of its snapshot, the new oldest; the districts are
-- taken in ascending order by every Delivery, so two never wait in a cycle.
CREATE OR REPLACE FUNCTION tpcc_delivery(p_w int, p_carrier int) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
  v_out int[] := '{}';
  v_o int; v_c int; v_sum numeric;
BEGIN
  FOR d IN 1..10 LOOP
    -- 2.7.4.2: the undelivered order with the lowest NO_O_ID, removed.
    DELETE FROM new_order
     WHERE no_w_id = p_w AND no_d_id = d AND no_o_id = (
       SELECT no_o_id FROM new_order WHERE no_w_id = p_w AND no_d_id = d
        ORDER BY no_o_id LIMIT 1 FOR UPDATE)
    RETURNING no_o_id INTO v_o;
    IF NOT FOUND THEN
      v_out := v_out || 0;
      CONTINUE;
    END IF;
    -- O_CARRIER_ID set, O_C_ID read.
    UPDATE orders SET o_carrier_id = p_carrier
     WHERE o_w_id = p_w AND o_d_id = d AND o_id = v_o
    RETURNING o_c_id INTO v_c;
    -- OL_DELIVERY_D = now on every line; their OL_AMOUNT summed.
    WITH l AS (
      UPDATE order_line SET ol_delivery_d = now()
       WHERE ol_w_id = p_w AND ol_d_id = d AND ol_o_id = v_o
      RETURNING ol_amount)
    SELECT sum(ol_amount) INTO v_sum FROM l;
    -- C_BALANCE += the sum, C_DELIVERY_CNT += 1.
    UPDATE customer SET c_balance = c_balance + coalesce(v_sum, 0), c_delivery_cnt = c_delivery_cnt + 1
     WHERE c_w_id = p_w AND c_d_id = d AND c_id = v_c;
    v_out := v_out || v_o;
  END LOOP;
  RETURN v_out;
END $$;

-- Stock-Level (2.8), read-only: distinct items of the district's last 20
-- orders whose home-warehouse stock is below the threshold. Committed reads
-- are enough (3.4.1, level 1). Two statements rather than one join: a
-- stock row matches "= ANY" once however many lines name its item, so
-- count(*) counts distinct items. The plans are forced generic: with its
-- parameters unknown, PostgreSQL costs the range of 20 orders as 1,000
-- lines (a default selectivity), 13 times a custom plan's cost, so it
-- would plan the range scan afresh on every call (111 us a call, against
-- 135 us to run it, in pg_stat_statements). The generic plans are the ones
-- a custom plan picks (an index range scan on order_line, index probes on
-- stock), and the two SETs cost under 2 us a call. A generic plan's estimate
-- grows with the districts' orders and could go parallel, as the
-- statements-mode join's did (see connectSerial); so the routine turns
-- parallel query off itself, for any caller, not only tierbench's.
CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w int, p_d int, p_threshold int) RETURNS int
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan SET max_parallel_workers_per_gather = 0 AS $$
DECLARE v_next int; v_items int[]; v_count int;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  IF NOT FOUND THEN RAISE EXCEPTION 'district % of warehouse % does not exist', p_d, p_w; END IF;
  SELECT array_agg(ol_i_id) INTO v_items FROM order_line
   WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id >= v_next - 20 AND ol_o_id < v_next;
  SELECT count(*) INTO v_count FROM stock
   WHERE s_w_id = p_w AND s_i_id = ANY (v_items) AND s_quantity < p_threshold;
  RETURN v_count;
END $$;
