//! The schema walk: a Parquet schema to the nesting model of a projection.

use super::*;

/// The nesting model of the schema's top-level fields, keeping only the
/// leaf columns in `leaves` when given (as arrow-rs's
/// `ProjectionMask::leaves`: a group without a kept leaf disappears, a map
/// needs its key and its value). The forms arrow-rs refuses, and leaves
/// outside the type mapping, are [`DecodePlanError::Unsupported`].
pub fn nest_fields(
    schema: &SchemaDescriptor,
    leaves: Option<&[usize]>,
) -> Result<Vec<NestField>, DecodePlanError> {
    let mut builder = ModelBuilder {
        schema,
        keep: leaves,
        next_column: 0,
    };
    let root = schema.root_schema();
    if let ConvertedType::LIST | ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE =
        root.get_basic_info().converted_type()
    {
        return Err(DecodePlanError::Unsupported {
            column: root.name().to_string(),
            what: "a LIST or MAP annotation on the schema's root".into(),
        });
    }
    let context = Context {
        def: 0,
        rep: 0,
        path: String::new(),
    };
    let mut fields = Vec::new();
    for child in root.get_fields() {
        if let Some(field) = builder.visit(child, &context)? {
            fields.push(field);
        }
    }
    Ok(fields)
}

/// A point of the schema walk: the definition and repetition levels there
/// (a field's parent's, or the field's own once its repetition counts),
/// and the path to it (for errors).
#[derive(Debug, Clone)]
struct Context {
    def: i16,
    rep: i16,
    path: String,
}

impl Context {
    /// The context of `ty`'s children, `ty` adding `def` and `rep`.
    fn below(&self, ty: &Type, def: i16, rep: i16) -> Context {
        Context {
            def: self.def + def,
            rep: self.rep + rep,
            path: self.path_of(ty),
        }
    }

    fn path_of(&self, ty: &Type) -> String {
        if self.path.is_empty() {
            ty.name().to_string()
        } else {
            format!("{}.{}", self.path, ty.name())
        }
    }

    fn unsupported(&self, ty: &Type, what: impl Into<String>) -> DecodePlanError {
        DecodePlanError::Unsupported {
            column: self.path_of(ty),
            what: what.into(),
        }
    }
}

/// The walk that builds the model (leaves numbered in schema order, as the
/// [`SchemaDescriptor`] numbers them).
struct ModelBuilder<'a> {
    schema: &'a SchemaDescriptor,
    keep: Option<&'a [usize]>,
    next_column: usize,
}

fn repetition(ty: &Type) -> Repetition {
    let info = ty.get_basic_info();
    if info.has_repetition() {
        info.repetition()
    } else {
        Repetition::REQUIRED
    }
}

fn field_id(ty: &Type) -> Option<i32> {
    let info = ty.get_basic_info();
    info.has_id().then(|| info.id())
}

/// Whether a group is annotated LIST (logical or converted type).
fn is_list_annotated(ty: &Type) -> bool {
    let info = ty.get_basic_info();
    match info.logical_type_ref() {
        Some(logical) => *logical == LogicalType::List,
        None => info.converted_type() == ConvertedType::LIST,
    }
}

/// Whether a group's only field is repeated.
fn has_single_repeated_field(ty: &Type) -> bool {
    matches!(ty.get_fields(), [only] if repetition(only) == Repetition::REPEATED)
}

impl ModelBuilder<'_> {
    /// The field of `ty` (None when the projection keeps none of its
    /// leaves), by its annotation.
    fn visit(&mut self, ty: &TypePtr, ctx: &Context) -> Result<Option<NestField>, DecodePlanError> {
        let node = if ty.is_primitive() {
            self.visit_plain(ty, ctx)?
        } else {
            match ty.get_basic_info().converted_type() {
                ConvertedType::LIST => self.visit_list(ty, ctx)?,
                ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE => self.visit_map(ty, ctx)?,
                _ => self.visit_plain(ty, ctx)?,
            }
        };
        Ok(node.map(|node| NestField {
            name: ty.name().to_string(),
            field_id: field_id(ty),
            node,
        }))
    }

    /// A leaf or a struct: OPTIONAL adds a definition level; REPEATED makes
    /// it the required element of a non-nullable list.
    fn visit_plain(
        &mut self,
        ty: &TypePtr,
        ctx: &Context,
    ) -> Result<Option<NestNode>, DecodePlanError> {
        match repetition(ty) {
            Repetition::REPEATED => self.repeated_as_list(ty, ctx, false),
            Repetition::OPTIONAL => self.plain_node(ty, &ctx.below(ty, 1, 0), true),
            Repetition::REQUIRED => self.plain_node(ty, &ctx.below(ty, 0, 0), false),
        }
    }

    /// The node of a leaf or struct whose levels are `here`'s.
    fn plain_node(
        &mut self,
        ty: &TypePtr,
        here: &Context,
        nullable: bool,
    ) -> Result<Option<NestNode>, DecodePlanError> {
        if ty.is_primitive() {
            return self.leaf(here);
        }
        let mut fields = Vec::new();
        for child in ty.get_fields() {
            if let Some(field) = self.visit(child, here)? {
                fields.push(field);
            }
        }
        if fields.is_empty() {
            return Ok(None);
        }
        Ok(Some(NestNode::Struct(StructNode {
            fields,
            nullable,
            def: here.def,
        })))
    }

    /// A repeated leaf or struct as a list of it (the legacy forms): the
    /// list's null level is the parent's (`ctx`), its element one
    /// definition and one repetition level deeper, non-null.
    fn repeated_as_list(
        &mut self,
        ty: &TypePtr,
        ctx: &Context,
        nullable: bool,
    ) -> Result<Option<NestNode>, DecodePlanError> {
        let levels = ListLevels {
            nullable,
            null_def: ctx.def,
            elem_def: ctx.def + 1,
            rep: ctx.rep + 1,
        };
        let element = self.plain_node(ty, &ctx.below(ty, 1, 1), false)?;
        Ok(element.map(|node| {
            NestNode::List(ListNode {
                element: Box::new(NestField {
                    name: ty.name().to_string(),
                    field_id: None,
                    node,
                }),
                levels,
                large: false,
                fixed: None,
            })
        }))
    }

    /// A LIST group: the standard three-level form, or the legacy
    /// two-level forms (a repeated leaf; a repeated group of several
    /// fields; a repeated group of one field named `array` or
    /// `<list>_tuple`), which are lists of the repeated field itself.
    fn visit_list(
        &mut self,
        ty: &TypePtr,
        ctx: &Context,
    ) -> Result<Option<NestNode>, DecodePlanError> {
        let [repeated] = ty.get_fields() else {
            let n = ty.get_fields().len();
            return Err(ctx.unsupported(ty, format!("LIST group with {n} fields (1)")));
        };
        if repetition(repeated) != Repetition::REPEATED {
            return Err(ctx.unsupported(ty, "LIST group whose field is not repeated"));
        }
        let (null_def, nullable) = match repetition(ty) {
            Repetition::REQUIRED => (ctx.def, false),
            Repetition::OPTIONAL => (ctx.def + 1, true),
            Repetition::REPEATED => return Err(ctx.unsupported(ty, "repeated LIST group")),
        };
        let list_ctx = Context {
            def: null_def,
            rep: ctx.rep,
            path: ctx.path_of(ty),
        };
        let Some(item) = three_level_element(ty, repeated) else {
            return self.repeated_as_list(repeated, &list_ctx, nullable);
        };
        let levels = ListLevels {
            nullable,
            null_def,
            elem_def: null_def + 1,
            rep: ctx.rep + 1,
        };
        let item_ctx = list_ctx.below(repeated, 1, 1);
        Ok(self.visit(item, &item_ctx)?.map(|element| {
            NestNode::List(ListNode {
                element: Box::new(element),
                levels,
                large: false,
                fixed: None,
            })
        }))
    }

    /// A MAP or MAP_KEY_VALUE group: one repeated key-value group of a key
    /// and a value; with a key only, a list of keys (as arrow-rs). Kept
    /// when the projection keeps both its key and its value.
    fn visit_map(
        &mut self,
        ty: &TypePtr,
        ctx: &Context,
    ) -> Result<Option<NestNode>, DecodePlanError> {
        let (null_def, nullable) = match repetition(ty) {
            Repetition::REQUIRED => (ctx.def, false),
            Repetition::OPTIONAL => (ctx.def + 1, true),
            Repetition::REPEATED => return Err(ctx.unsupported(ty, "repeated MAP group")),
        };
        let Some((entries, key_ty, value_ty)) = map_key_value(ty, ctx)? else {
            return self.visit_list(ty, ctx);
        };
        let levels = ListLevels {
            nullable,
            null_def,
            elem_def: null_def + 1,
            rep: ctx.rep + 1,
        };
        let map_ctx = Context {
            def: null_def,
            rep: ctx.rep,
            path: ctx.path_of(ty),
        };
        let entries_ctx = map_ctx.below(entries, 1, 1);
        let key = self.visit(key_ty, &entries_ctx)?;
        let value = self.visit(value_ty, &entries_ctx)?;
        let (Some(key), Some(value)) = (key, value) else {
            return Ok(None);
        };
        Ok(Some(NestNode::Map(MapNode {
            entries_name: entries.name().to_string(),
            key: Box::new(key),
            value: Box::new(value),
            levels,
        })))
    }

    /// The next leaf column, at `ctx`'s levels (its own repetition
    /// included).
    fn leaf(&mut self, ctx: &Context) -> Result<Option<NestNode>, DecodePlanError> {
        let column = self.next_column;
        self.next_column += 1;
        if self.keep.is_some_and(|keep| !keep.contains(&column)) {
            return Ok(None);
        }
        if column >= self.schema.num_columns() {
            return Err(DecodePlanError::Unsupported {
                column: ctx.path.clone(),
                what: format!(
                    "leaf {column} past the schema's {} columns",
                    self.schema.num_columns()
                ),
            });
        }
        let descriptor = self.schema.column(column);
        if (descriptor.max_def_level(), descriptor.max_rep_level()) != (ctx.def, ctx.rep) {
            return Err(DecodePlanError::Unsupported {
                column: ctx.path.clone(),
                what: format!(
                    "levels (def {}, rep {}) where the schema walk gives (def {}, rep {})",
                    descriptor.max_def_level(),
                    descriptor.max_rep_level(),
                    ctx.def,
                    ctx.rep,
                ),
            });
        }
        let column_type = leaf_type(&descriptor)?;
        Ok(Some(NestNode::Leaf(LeafNode {
            column,
            nullable: column_type.nullable,
            column_type,
            def: ctx.def,
            rep: ctx.rep,
        })))
    }
}

/// A MAP group's repeated key-value group, its key and its value,
/// checked as arrow-rs checks them; None for a key-value group of a key
/// only (arrow-rs reads it as a list of keys).
fn map_key_value<'t>(
    map: &'t Type,
    ctx: &Context,
) -> Result<Option<(&'t TypePtr, &'t TypePtr, &'t TypePtr)>, DecodePlanError> {
    let [entries] = map.get_fields() else {
        let n = map.get_fields().len();
        return Err(ctx.unsupported(map, format!("MAP group with {n} fields (1)")));
    };
    if repetition(entries) != Repetition::REPEATED || entries.is_primitive() {
        return Err(ctx.unsupported(map, "MAP group whose field is not a repeated group"));
    }
    let (key, value) = match entries.get_fields() {
        [_key] => return Ok(None),
        [key, value] => (key, value),
        other => {
            let n = other.len();
            return Err(ctx.unsupported(map, format!("MAP key-value group with {n} fields (2)")));
        }
    };
    if repetition(key) == Repetition::REPEATED {
        return Err(ctx.unsupported(map, "repeated MAP key"));
    }
    if repetition(value) == Repetition::REPEATED {
        return Err(ctx.unsupported(map, "repeated MAP value"));
    }
    Ok(Some((entries, key, value)))
}

/// The element of a three-level LIST group: its repeated group's only
/// field; None when the repeated field is the element itself (the legacy
/// two-level forms: a repeated leaf, a repeated group of several fields, or
/// of one field when named `array` or `<list>_tuple`, not annotated LIST,
/// and that field not repeated).
fn three_level_element<'t>(list: &Type, repeated: &'t Type) -> Option<&'t TypePtr> {
    if repeated.is_primitive() {
        return None;
    }
    let [item] = repeated.get_fields() else {
        return None;
    };
    let legacy_name =
        repeated.name() == "array" || repeated.name() == format!("{}_tuple", list.name());
    let legacy =
        legacy_name && !is_list_annotated(repeated) && !has_single_repeated_field(repeated);
    (!legacy).then_some(item)
}
