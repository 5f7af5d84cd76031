-- TPC-H's primary keys (clause 1.4.2) and the foreign-key indexes the
-- common kits create for PostgreSQL (HammerDB's among them), largest first;
-- each line is one statement, run in parallel. lineitem (l_orderkey) and
-- partsupp (ps_partkey) lead their primary keys, which serve them.
ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)
CREATE INDEX lineitem_part_supp_fkidx ON lineitem (l_partkey, l_suppkey)
ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)
CREATE INDEX orders_customer_fkidx ON orders (o_custkey)
ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)
CREATE INDEX partsupp_supplier_fkidx ON partsupp (ps_suppkey)
ALTER TABLE customer ADD PRIMARY KEY (c_custkey)
CREATE INDEX customer_nation_fkidx ON customer (c_nationkey)
ALTER TABLE part ADD PRIMARY KEY (p_partkey)
ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)
CREATE INDEX supplier_nation_fkidx ON supplier (s_nationkey)
ALTER TABLE nation ADD PRIMARY KEY (n_nationkey)
CREATE INDEX nation_region_fkidx ON nation (n_regionkey)
ALTER TABLE region ADD PRIMARY KEY (r_regionkey)
