-- The five TPC-C transactions as stored procedures (tierbench's "routines"
-- mode) for MariaDB 10.6+ and MySQL 8.0. A worker runs each with one CALL,
-- one round trip: the procedure starts its own transaction, commits it (or
-- rolls it back) itself, and returns its outputs as one final result set,
-- after the COMMIT. Clause numbers refer to TPC-C 5.11.
--
-- Counting (docs/tpcc.md, TPM): the COMMIT or ROLLBACK statement a
-- procedure runs adds one to Com_commit or Com_rollback, as HammerDB's
-- procedures' do; the CALL itself, run with autocommit on, adds nothing,
-- nor does the final SELECT. So every call counts exactly once: a
-- committed transaction as a commit, the rolled-back New-Order (2.4.2.3)
-- and every failed call as a rollback (the handler's; it runs on a lock
-- wait timeout, a deadlock, a SIGNAL, and after KILL QUERY too). Only a
-- call cut off by a lost connection counts nothing: the server rolls its
-- transaction back without a ROLLBACK statement.
--
-- Every procedure has an EXIT handler for SQLEXCEPTION that rolls the
-- transaction back and re-signals the error unchanged: InnoDB rolls back
-- only the failed statement on a lock wait timeout (1205, unless
-- innodb_rollback_on_timeout), and the rest of the transaction must not
-- survive into the caller's session. (On a deadlock, 1213, InnoDB has
-- rolled it back already; the ROLLBACK is then a no-op that still counts.)
--
-- Isolation: the read-write transactions run at READ COMMITTED, set by a
-- one-shot SET TRANSACTION before their START TRANSACTION: every row they
-- change is locked by the statement that changes it (or by SELECT ... FOR
-- UPDATE), and READ COMMITTED takes no gap locks, which REPEATABLE READ
-- takes on every locking range scan (Delivery's, say) and which would make
-- New-Order's insert into a neighbouring district wait. Order-Status reads
-- one REPEATABLE READ snapshot, read-only; Stock-Level needs committed
-- reads only (3.4.1). Lock order as in the PostgreSQL routines: New-Order
-- its district, then its stock rows sorted by (supply warehouse, item);
-- Payment its district, its customer, then the warehouse row last; Delivery
-- per district, in ascending order, the oldest NEW-ORDER row.
--
-- Each procedure's COMMENT carries the routines' version, which a worker
-- checks before it runs anything (routinesVersion in runner.go): bump both
-- when a signature, a result or what a procedure does changes. SQL SECURITY INVOKER: a procedure
-- runs with its caller's privileges, so it keeps working in a copy of the
-- database whose definer account does not exist.
--
-- Installing drops and recreates each procedure (MySQL has no CREATE OR
-- REPLACE PROCEDURE). The file is also a script for the mariadb and mysql
-- clients: `mariadb DBNAME < routines.sql`.
DELIMITER $$

DROP PROCEDURE IF EXISTS tpcc_new_order$$
-- New-Order (2.4). p_lines is a JSON array of the order lines in input
-- order (OL_NUMBER = position): [[item, supply warehouse, quantity], ...].
-- Returns (o_id, total_cents, rolled_back). An unused item (2.4.1.4) rolls
-- the whole transaction back (counted in Com_rollback) and returns the
-- order number with rolled_back = 1 (2.4.2.3).
CREATE PROCEDURE tpcc_new_order(p_w INT, p_d INT, p_c INT, p_all_local INT, p_lines VARCHAR(2000))
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'tierbench routines 2'
BEGIN
  DECLARE v_n, v_o, v_found, v_done INT DEFAULT 0;
  DECLARE v_i, v_sw, v_q INT;
  DECLARE v_w_tax, v_d_tax, v_discount DECIMAL(4,4);
  DECLARE v_last VARCHAR(16);
  DECLARE v_credit CHAR(2);
  DECLARE v_sum DECIMAL(12,2);
  DECLARE v_msg VARCHAR(255);
  -- The lines grouped by stock row and sorted by (supply warehouse, item):
  -- updated in this order, the rows are locked in it, so two New-Orders
  -- never wait on each other in a cycle. Lines naming one row come in
  -- OL_NUMBER order and each applies the quantity rule in turn.
  DECLARE c_lines CURSOR FOR
    SELECT l.w, l.i, l.q FROM JSON_TABLE(p_lines, '$[*]' COLUMNS (
      n FOR ORDINALITY, i INT PATH '$[0]', w INT PATH '$[1]', q INT PATH '$[2]')) AS l
    ORDER BY l.w, l.i, l.n;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  SET v_n = JSON_LENGTH(p_lines);
  IF v_n IS NULL OR v_n < 1 OR v_n > 15 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc_new_order: p_lines is not a JSON array of 1 to 15 order lines';
  END IF;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  -- 2.4.2.2: D_NEXT_O_ID, incremented. The district row lock serializes
  -- the New-Orders of a district, so order numbers are handed out without
  -- gaps (3.3.2.2). LAST_INSERT_ID(expr) hands the new value back without
  -- another read of the row.
  UPDATE district SET d_next_o_id = LAST_INSERT_ID(d_next_o_id + 1) WHERE d_w_id = p_w AND d_id = p_d;
  IF ROW_COUNT() = 0 THEN
    SET v_msg = CONCAT('district ', p_d, ' of warehouse ', p_w, ' does not exist');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;
  SET v_o = LAST_INSERT_ID() - 1;
  -- W_TAX, D_TAX; the customer's C_DISCOUNT, C_LAST and C_CREDIT.
  SELECT w_tax, d_tax, c_discount, c_last, c_credit INTO v_w_tax, v_d_tax, v_discount, v_last, v_credit
    FROM warehouse, district, customer
   WHERE w_id = p_w AND d_w_id = p_w AND d_id = p_d AND c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  IF v_last IS NULL THEN
    SET v_msg = CONCAT('customer ', p_c, ' of district ', p_d, ' of warehouse ', p_w, ' does not exist');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (v_o, p_d, p_w, p_c, NOW(), NULL, v_n, p_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);

  -- 2.4.2.2: each line's I_PRICE (I_NAME and I_DATA only feed the screen
  -- and the brand-generic flag, which is not stored), summed as OL_AMOUNT
  -- will be. All items are looked up before any stock is touched: the
  -- effect is the same as line by line, and a rolled-back order takes no
  -- stock locks.
  SELECT COUNT(*), SUM(l.q * i_price) INTO v_found, v_sum
    FROM JSON_TABLE(p_lines, '$[*]' COLUMNS (i INT PATH '$[0]', q INT PATH '$[2]')) AS l
    JOIN item ON i_id = l.i;
  IF v_found < v_n THEN
    -- 2.4.2.3: "Item number is not valid"; everything above rolls back.
    ROLLBACK;
    SELECT v_o AS o_id, 0 AS total_cents, 1 AS rolled_back;
  ELSE
    -- 2.4.2.2: per line, S_QUANTITY drops by OL_QUANTITY if that leaves
    -- at least 10, else it drops by OL_QUANTITY and is refilled by 91;
    -- S_YTD += OL_QUANTITY, S_ORDER_CNT += 1, S_REMOTE_CNT += 1 for a
    -- remote line.
    OPEN c_lines;
    stock_loop: LOOP
      FETCH c_lines INTO v_sw, v_i, v_q;
      IF v_done THEN
        LEAVE stock_loop;
      END IF;
      UPDATE stock SET
        s_quantity = IF(s_quantity >= v_q + 10, s_quantity - v_q, s_quantity - v_q + 91),
        s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + (v_sw <> p_w)
      WHERE s_w_id = v_sw AND s_i_id = v_i;
    END LOOP;
    CLOSE c_lines;
    -- OL_AMOUNT = OL_QUANTITY * I_PRICE, OL_DIST_INFO = S_DIST_xx of the
    -- order's district, all lines in one statement.
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
    SELECT v_o, p_d, p_w, l.n, l.i, l.w, NULL, l.q, l.q * i_price, CASE p_d
      WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
      WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
      WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      FROM JSON_TABLE(p_lines, '$[*]' COLUMNS (
        n FOR ORDINALITY, i INT PATH '$[0]', w INT PATH '$[1]', q INT PATH '$[2]')) AS l
      JOIN item ON i_id = l.i
      JOIN stock ON s_w_id = l.w AND s_i_id = l.i;
    IF ROW_COUNT() <> v_n THEN
      SET v_msg = CONCAT('stock rows missing: ', ROW_COUNT(), ' of ', v_n, ' order lines written');
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
    COMMIT;
    -- 2.4.2.2: total = sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX),
    -- in exact DECIMAL, rounded half away from zero to cents.
    SELECT v_o AS o_id, CAST(ROUND(v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax) * 100) AS SIGNED) AS total_cents,
           0 AS rolled_back;
  END IF;
END$$

DROP PROCEDURE IF EXISTS tpcc_payment$$
-- Payment (2.5). p_c_id = 0 selects the customer by p_c_last: of the
-- matching customers sorted by C_FIRST, the one at position ceil(n/2)
-- (2.5.2.2). H_AMOUNT comes in cents. Returns (c_id).
CREATE PROCEDURE tpcc_payment(p_w INT, p_d INT, p_cw INT, p_cd INT, p_c_id INT, p_c_last VARCHAR(16), p_amount_cents INT)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'tierbench routines 2'
BEGIN
  DECLARE v_amount DECIMAL(6,2);
  DECLARE v_c, v_n INT;
  DECLARE v_w_name, v_d_name VARCHAR(10);
  DECLARE v_w_street_1, v_w_street_2, v_w_city, v_d_street_1, v_d_street_2, v_d_city,
          v_c_street_1, v_c_street_2, v_c_city VARCHAR(20);
  DECLARE v_w_state, v_d_state, v_c_state, v_c_middle, v_c_credit CHAR(2);
  DECLARE v_w_zip, v_d_zip, v_c_zip CHAR(9);
  DECLARE v_c_first, v_c_last VARCHAR(16);
  DECLARE v_c_phone CHAR(16);
  DECLARE v_c_since DATETIME;
  DECLARE v_c_credit_lim, v_c_balance DECIMAL(12,2);
  DECLARE v_c_discount DECIMAL(4,4);
  DECLARE v_c_data VARCHAR(200);
  DECLARE v_msg VARCHAR(255);
  DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  SET v_amount = p_amount_cents * 0.01; -- exact: cents times 0.01
  SET v_c = p_c_id;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  -- 2.5.2.2: D_YTD and, below, W_YTD grow by H_AMOUNT.
  UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w AND d_id = p_d;
  IF ROW_COUNT() = 0 THEN
    SET v_msg = CONCAT('district ', p_d, ' of warehouse ', p_w, ' does not exist');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;

  IF v_c = 0 THEN
    -- customer_last_idx covers both: (c_w_id, c_d_id, c_last, c_first) and c_id.
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_c_last;
    IF v_n = 0 THEN
      SET v_msg = CONCAT('no customer named ', p_c_last, ' in district ', p_cd, ' of warehouse ', p_cw);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
    SET v_n = (v_n - 1) DIV 2; -- row ceil(n/2), counted from 0
    SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_c_last
     ORDER BY c_first LIMIT v_n, 1;
  END IF;

  -- C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT, C_PAYMENT_CNT += 1; a
  -- bad-credit customer's C_DATA gets (C_ID, C_D_ID, C_W_ID, D_ID, W_ID,
  -- H_AMOUNT) in front, cut to 500 characters.
  UPDATE customer SET
    c_balance = c_balance - v_amount,
    c_ytd_payment = c_ytd_payment + v_amount,
    c_payment_cnt = c_payment_cnt + 1,
    c_data = IF(c_credit = 'BC',
                LEFT(CONCAT(c_id, ' ', c_d_id, ' ', c_w_id, ' ', p_d, ' ', p_w, ' ', v_amount, ' | ', c_data), 500),
                c_data)
  WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  IF ROW_COUNT() = 0 THEN
    SET v_msg = CONCAT('customer ', v_c, ' of district ', p_cd, ' of warehouse ', p_cw, ' does not exist');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;

  -- The warehouse row last: every Payment of the warehouse updates it and
  -- holds its lock until the commit, so it is taken when all that is left
  -- is reading the screen's fields, HISTORY's insert and the commit.
  -- Whoever holds it waits for nothing more, so Payments never wait on each
  -- other in a cycle.
  UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w;
  IF ROW_COUNT() = 0 THEN
    SET v_msg = CONCAT('warehouse ', p_w, ' does not exist');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;

  -- 2.5.2.2: what the terminal shows: the warehouse's and the district's
  -- names and addresses, the customer's details and new balance, and the
  -- first 200 characters of a bad-credit customer's C_DATA.
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
         d_name, d_street_1, d_street_2, d_city, d_state, d_zip,
         c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
         c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance,
         IF(c_credit = 'BC', LEFT(c_data, 200), '')
    INTO v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip,
         v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip,
         v_c_first, v_c_middle, v_c_last, v_c_street_1, v_c_street_2, v_c_city, v_c_state, v_c_zip,
         v_c_phone, v_c_since, v_c_credit, v_c_credit_lim, v_c_discount, v_c_balance, v_c_data
    FROM warehouse, district, customer
   WHERE w_id = p_w AND d_w_id = p_w AND d_id = p_d AND c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;

  -- H_DATA = W_NAME, four spaces, D_NAME.
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (v_c, p_cd, p_cw, p_d, p_w, NOW(), v_amount, CONCAT(v_w_name, '    ', v_d_name));
  COMMIT;
  SELECT v_c AS c_id;
END$$

DROP PROCEDURE IF EXISTS tpcc_order_status$$
-- Order-Status (2.6), read-only, in one REPEATABLE READ snapshot: the
-- customer, the latest order and its lines are consistent with each other
-- (3.4.1). p_c_id = 0 selects by name as Payment does. Returns (c_id,
-- o_id, line_count), o_id 0 when the customer has no order.
CREATE PROCEDURE tpcc_order_status(p_w INT, p_d INT, p_c_id INT, p_c_last VARCHAR(16))
READS SQL DATA SQL SECURITY INVOKER COMMENT 'tierbench routines 2'
BEGIN
  DECLARE v_c, v_n, v_o, v_lines INT DEFAULT 0;
  DECLARE v_carrier INT;
  DECLARE v_entry DATETIME;
  DECLARE v_balance DECIMAL(12,2);
  DECLARE v_first, v_last VARCHAR(16);
  DECLARE v_middle CHAR(2);
  DECLARE v_msg VARCHAR(255);
  DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  SET v_c = p_c_id;
  SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;
  START TRANSACTION WITH CONSISTENT SNAPSHOT;
  IF v_c = 0 THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_c_last;
    IF v_n = 0 THEN
      SET v_msg = CONCAT('no customer named ', p_c_last, ' in district ', p_d, ' of warehouse ', p_w);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
    SET v_n = (v_n - 1) DIV 2;
    SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_c_last
     ORDER BY c_first LIMIT v_n, 1;
  END IF;
  SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  IF v_last IS NULL THEN
    SET v_msg = CONCAT('customer ', v_c, ' of district ', p_d, ' of warehouse ', p_w, ' does not exist');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;
  -- 2.6.2.2: the customer's order with the largest O_ID (orders_customer_idx),
  -- then its lines (I_ID, SUPPLY_W_ID, QUANTITY, AMOUNT, DELIVERY_D).
  SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier
    FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c
   ORDER BY o_id DESC LIMIT 1;
  IF v_o <> 0 THEN
    SELECT COUNT(*) INTO v_lines
      FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  END IF;
  COMMIT;
  SELECT v_c AS c_id, v_o AS o_id, v_lines AS line_count;
END$$

DROP PROCEDURE IF EXISTS tpcc_delivery$$
-- Delivery (2.7), all ten districts in one transaction. Returns (delivered):
-- the order delivered per district, comma-separated, 0 for a district
-- with nothing to deliver (skipped, 2.7.4.2). A second Delivery of the
-- warehouse waits for the first's row rather than skip it (SKIP LOCKED would
-- take the next-oldest order, and if the first then rolled back, the
-- district's undelivered orders would have a gap: 3.3.2.3 fails). Once the
-- first commits, InnoDB reads the row again, finds it deleted and locks the
-- next; every Delivery takes the districts in ascending order, so two never
-- wait in a cycle.
CREATE PROCEDURE tpcc_delivery(p_w INT, p_carrier INT)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'tierbench routines 2'
BEGIN
  DECLARE v_d INT DEFAULT 1;
  DECLARE v_o, v_c INT;
  DECLARE v_out VARCHAR(200) DEFAULT '';
  DECLARE v_msg VARCHAR(255);
  DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  WHILE v_d <= 10 DO
    -- 2.7.4.2: the undelivered order with the lowest NO_O_ID, removed.
    SET v_o = NULL;
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
     ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_o IS NULL THEN
      SET v_out = CONCAT(v_out, IF(v_d = 1, '', ','), '0');
    ELSE
      DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
      -- O_CARRIER_ID set; O_C_ID read in the same statement, handed back
      -- by LAST_INSERT_ID(expr) (the column keeps its value).
      UPDATE orders SET o_carrier_id = p_carrier, o_c_id = LAST_INSERT_ID(o_c_id)
       WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      IF ROW_COUNT() = 0 THEN
        SET v_msg = CONCAT('order ', v_o, ' of district ', v_d, ' of warehouse ', p_w, ' does not exist');
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
      END IF;
      SET v_c = LAST_INSERT_ID();
      -- OL_DELIVERY_D = now on every line; C_BALANCE += their OL_AMOUNT
      -- summed, C_DELIVERY_CNT += 1.
      UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      UPDATE customer SET
        c_balance = c_balance + (SELECT COALESCE(SUM(ol_amount), 0) FROM order_line
                                  WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o),
        c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
      SET v_out = CONCAT(v_out, IF(v_d = 1, '', ','), v_o);
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
  SELECT v_out AS delivered;
END$$

DROP PROCEDURE IF EXISTS tpcc_stock_level$$
-- Stock-Level (2.8), read-only: distinct items of the district's last 20
-- orders whose home-warehouse stock is below the threshold. Committed
-- reads are enough (3.4.1, level 1). Returns (low_stock).
CREATE PROCEDURE tpcc_stock_level(p_w INT, p_d INT, p_threshold INT)
READS SQL DATA SQL SECURITY INVOKER COMMENT 'tierbench routines 2'
BEGIN
  DECLARE v_next, v_count INT;
  DECLARE v_msg VARCHAR(255);
  DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  SET TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY;
  START TRANSACTION;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  IF v_next IS NULL THEN
    SET v_msg = CONCAT('district ', p_d, ' of warehouse ', p_w, ' does not exist');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;
  SELECT COUNT(DISTINCT s_i_id) INTO v_count
    FROM order_line JOIN stock ON s_w_id = p_w AND s_i_id = ol_i_id
   WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
     AND s_quantity < p_threshold;
  COMMIT;
  SELECT v_count AS low_stock;
END$$

DELIMITER ;
