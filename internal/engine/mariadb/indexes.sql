-- Secondary indexes, one statement per line, built after the load.
CREATE INDEX customer_last_idx ON customer (c_w_id, c_d_id, c_last, c_first)
CREATE INDEX orders_customer_idx ON orders (o_w_id, o_d_id, o_c_id, o_id)
